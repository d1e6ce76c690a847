#!/usr/bin/env python3
"""Files for bench/import.sh, made up but shaped like the real thing.

  import-gen.py wxr N    a WordPress export (WXR 1.2) of N posts: classic and
                         block-editor content with shortcodes, categories and
                         tags, custom fields, comments on every fifth post
  import-gen.py jsonl N  a Bulwark export (bulwark export's JSON lines) of N
                         articles, each with an edge to one of 20 keywords
"""
import json
import sys

WORDS = ("harbour quay ship rope anchor tide crane sail cargo dock lantern gull "
         "pier ferry mast keel hull deck buoy wharf").split()


def text(i, n):
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def wxr(n):
    out = sys.stdout
    out.write('<?xml version="1.0" encoding="UTF-8" ?>\n<rss version="2.0" '
              'xmlns:excerpt="http://wordpress.org/export/1.2/excerpt/" '
              'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
              'xmlns:wfw="http://wellformedweb.org/CommentAPI/" '
              'xmlns:dc="http://purl.org/dc/elements/1.1/" '
              'xmlns:wp="http://wordpress.org/export/1.2/">\n<channel>\n'
              '<title>Bench blog</title><link>https://bench.example.org</link>\n'
              '<wp:wxr_version>1.2</wp:wxr_version>\n'
              '<wp:base_site_url>https://bench.example.org</wp:base_site_url>\n'
              '<wp:base_blog_url>https://bench.example.org</wp:base_blog_url>\n')
    for a in (1, 2):
        out.write(f'<wp:author><wp:author_id>{a}</wp:author_id><wp:author_login><![CDATA[author{a}]]>'
                  f'</wp:author_login><wp:author_display_name><![CDATA[Author {a}]]>'
                  '</wp:author_display_name></wp:author>\n')
    for c in range(20):
        out.write(f'<wp:category><wp:term_id>{100 + c}</wp:term_id><wp:category_nicename>'
                  f'<![CDATA[cat-{c}]]></wp:category_nicename><wp:category_parent><![CDATA[]]>'
                  f'</wp:category_parent><wp:cat_name><![CDATA[Category {c}]]></wp:cat_name>'
                  '</wp:category>\n')
    for t in range(50):
        out.write(f'<wp:tag><wp:term_id>{200 + t}</wp:term_id><wp:tag_slug><![CDATA[tag-{t}]]>'
                  f'</wp:tag_slug><wp:tag_name><![CDATA[Tag {t}]]></wp:tag_name></wp:tag>\n')
    for i in range(n):
        pid = 1000 + i
        month = 1 + i % 12
        if i % 2:
            body = "\n\n".join(f"<!-- wp:paragraph -->\n<p>{text(i + k, 40)}</p>\n<!-- /wp:paragraph -->"
                               for k in range(6))
        else:
            body = "\n\n".join(text(i + k, 40) for k in range(5))
            body += '\n\n[caption id="x" width="300"]<img src="https://bench.example.org/x.png" /> A caption[/caption]'
            body += "\n\nhttps://www.youtube.com/watch?v=bench\n\n[contact-form-7 id=\"1\"]"
        comments = ""
        if i % 5 == 0:
            for k in range(3):
                cid = pid * 10 + k
                parent = cid - 1 if k else 0
                comments += (f'<wp:comment><wp:comment_id>{cid}</wp:comment_id><wp:comment_author>'
                             f'<![CDATA[Reader {k}]]></wp:comment_author><wp:comment_author_email>'
                             f'r{k}@example.net</wp:comment_author_email><wp:comment_date_gmt>'
                             f'2024-{month:02d}-02 10:00:00</wp:comment_date_gmt><wp:comment_content>'
                             f'<![CDATA[{text(i + k, 12)}]]></wp:comment_content><wp:comment_approved>'
                             f'1</wp:comment_approved><wp:comment_parent>{parent}</wp:comment_parent>'
                             '</wp:comment>')
        out.write(
            f'<item><title><![CDATA[Post {i}: {text(i, 4)}]]></title>'
            f'<link>https://bench.example.org/2024/{month:02d}/post-{i}/</link>'
            f'<dc:creator><![CDATA[author{1 + i % 2}]]></dc:creator>'
            f'<content:encoded><![CDATA[{body}]]></content:encoded>'
            f'<excerpt:encoded><![CDATA[{text(i, 15)}]]></excerpt:encoded>'
            f'<wp:post_id>{pid}</wp:post_id>'
            f'<wp:post_date><![CDATA[2024-{month:02d}-01 10:00:00]]></wp:post_date>'
            f'<wp:post_date_gmt><![CDATA[2024-{month:02d}-01 08:00:00]]></wp:post_date_gmt>'
            f'<wp:comment_status><![CDATA[open]]></wp:comment_status>'
            f'<wp:post_name><![CDATA[post-{i}]]></wp:post_name>'
            f'<wp:status><![CDATA[publish]]></wp:status><wp:post_parent>0</wp:post_parent>'
            f'<wp:menu_order>0</wp:menu_order><wp:post_type><![CDATA[post]]></wp:post_type>'
            f'<wp:post_password><![CDATA[]]></wp:post_password><wp:is_sticky>0</wp:is_sticky>'
            f'<category domain="category" nicename="cat-{i % 20}"><![CDATA[Category {i % 20}]]></category>'
            f'<category domain="post_tag" nicename="tag-{i % 50}"><![CDATA[Tag {i % 50}]]></category>'
            f'<wp:postmeta><wp:meta_key><![CDATA[rating]]></wp:meta_key><wp:meta_value>'
            f'<![CDATA[a:2:{{s:5:"stars";i:{i % 5};s:4:"tags";a:1:{{i:0;s:3:"new";}}}}]]>'
            f'</wp:meta_value></wp:postmeta>{comments}</item>\n')
    out.write("</channel>\n</rss>\n")


def jsonl(n):
    w = sys.stdout.write
    w(json.dumps({"type": "export", "version": 1, "site": "bench", "exported": "2026-11-26T00:00:00Z",
                  "since": None}) + "\n")
    def resource(key, rid, name, category, props):
        w(json.dumps({"type": "resource", "key": key, "id": rid, "name": name, "category": category,
                      "published": True, "publication_start": None, "publication_end": None,
                      "visibility": "public", "group": None, "creator": None,
                      "created": "2024-01-01T00:00:00Z", "modified": "2024-01-01T00:00:00Z",
                      "props": props}) + "\n")
    for k in range(20):
        resource(f"bench:k{k}", k, None, "keyword", {"title": f"Keyword {k}"})
    for i in range(n):
        resource(f"bench:{i}", 100 + i, None, "article",
                 {"title": f"Article {i}: {text(i, 4)}", "summary": text(i, 15),
                  "body": "".join(f"<p>{text(i + k, 40)}</p>" for k in range(3))})
    for i in range(n):
        w(json.dumps({"type": "edge", "subject": f"bench:{i}", "predicate": "subject",
                      "object": f"bench:k{i % 20}"}) + "\n")


if __name__ == "__main__":
    kind, n = sys.argv[1], int(sys.argv[2])
    {"wxr": wxr, "jsonl": jsonl}[kind](n)
