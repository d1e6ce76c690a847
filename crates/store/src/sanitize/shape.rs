//! The shape check that runs before ammonia: how deep the HTML nests and how
//! many elements it makes, measured by the HTML parser itself and stopped as
//! soon as a limit is passed.
//!
//! Why not a scan for `<` and `</`: the parser's tree building does not follow
//! the tags as written. It ignores end tags it cannot match, closes `<li>` and
//! `<p>` by itself except when it does not (`<li><dd><li><dd>` nests), re-opens
//! formatting elements closed by another element's end tag (`<p><b id=1></p>`
//! repeated makes every later paragraph hold all the earlier `<b>`s: 180 KB
//! became 350 MB and 150 s in ammonia), and moves elements out of tables. A
//! scan that guesses at this either refuses ordinary HTML or misses an attack.
//! So this runs html5ever's own tree builder (the one ammonia runs next) with a
//! sink that keeps only element names and parents, feeds it the text a little
//! at a time, and stops at the first chunk after which the tree is too deep or
//! too big. The parser's work per token grows with the depth of the tree, so
//! with the depth held at [`MAX_HTML_NESTING`] the check is linear in the
//! length of the text; ammonia then only ever sees HTML that passed.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::{Attribute, QualName, local_name, ns};

/// Elements an HTML property may make beyond one per three bytes of its text
/// (the shortest element, `<b>`, is three). Ordinary HTML never comes near;
/// the parser making elements nobody wrote (re-opened formatting elements)
/// does.
const SPARE_ELEMENTS: usize = 1024;

/// Text fed to the parser between two looks at the limits.
const CHUNK: usize = 512;

pub use crate::html_limits::{HtmlLimit, MAX_HTML_NESTING};

/// The most elements `html` may make.
fn element_budget(html: &str) -> usize {
    html.len() / 3 + SPARE_ELEMENTS
}

/// Parse `html` as ammonia will (a fragment in a `<div>`) and refuse it as
/// soon as it nests deeper than [`MAX_HTML_NESTING`] or makes more elements
/// than its length allows.
pub(crate) fn check_html_shape(html: &str) -> Result<(), HtmlLimit> {
    let sink = ShapeSink::new(element_budget(html));
    let mut parser = html5ever::parse_fragment(
        sink,
        html5ever::ParseOpts::default(),
        QualName::new(None, ns!(html), local_name!("div")),
        vec![],
        false,
    );
    let mut rest = html;
    while !rest.is_empty() {
        let mut end = CHUNK.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (chunk, tail) = rest.split_at(end);
        parser.process(StrTendril::from_slice(chunk));
        if let Some(limit) = parser.tokenizer.sink.sink.refused.get() {
            return Err(limit);
        }
        rest = tail;
    }
    parser.finish()
}

/// A node as far as the check needs it: elements have a name; the document,
/// comments and template contents do not.
struct Node {
    name: Option<QualName>,
    parent: Option<usize>,
    children: Vec<usize>,
    /// A `<template>`'s contents: a fragment whose parent is the template, so
    /// nesting inside templates counts like any other.
    contents: Option<usize>,
}

struct ShapeSink {
    nodes: RefCell<Vec<Node>>,
    elements: Cell<usize>,
    budget: usize,
    refused: Cell<Option<HtmlLimit>>,
    /// The parser's own stand-in for the fragment's context: `<html>` is
    /// element level 1, so the fragment's top level is 2.
    root_levels: usize,
}

const DOCUMENT: usize = 0;

impl ShapeSink {
    fn new(budget: usize) -> Self {
        ShapeSink {
            nodes: RefCell::new(vec![Node {
                name: None,
                parent: None,
                children: Vec::new(),
                contents: None,
            }]),
            elements: Cell::new(0),
            budget,
            refused: Cell::new(None),
            root_levels: 1,
        }
    }

    fn refuse(&self, limit: HtmlLimit) {
        if self.refused.get().is_none() {
            self.refused.set(Some(limit));
        }
    }

    fn add(&self, name: Option<QualName>, parent: Option<usize>) -> usize {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(Node {
            name,
            parent,
            children: Vec::new(),
            contents: None,
        });
        nodes.len() - 1
    }

    /// Element levels from `node` up, stopping once past the limit (so this
    /// costs at most the limit, however deep the tree).
    fn levels(nodes: &[Node], mut node: usize, stop: usize) -> usize {
        let mut levels = 0;
        loop {
            if nodes[node].name.is_some() {
                levels += 1;
                if levels > stop {
                    return levels;
                }
            }
            match nodes[node].parent {
                Some(p) => node = p,
                None => return levels,
            }
        }
    }

    fn attach(&self, parent: usize, child: NodeOrText<usize>) {
        let NodeOrText::AppendNode(child) = child else {
            return; // text adds no level
        };
        let mut nodes = self.nodes.borrow_mut();
        detach(&mut nodes, child);
        nodes[child].parent = Some(parent);
        nodes[parent].children.push(child);
        if self.refused.get().is_some() || nodes[child].name.is_none() {
            return;
        }
        let stop = MAX_HTML_NESTING + self.root_levels;
        if Self::levels(&nodes, child, stop) > stop {
            drop(nodes);
            self.refuse(HtmlLimit::Nesting);
        }
    }
}

fn detach(nodes: &mut [Node], child: usize) {
    if let Some(old) = nodes[child].parent.take() {
        let siblings = &mut nodes[old].children;
        if let Some(i) = siblings.iter().rposition(|&c| c == child) {
            siblings.remove(i);
        }
    }
}

impl TreeSink for ShapeSink {
    type Handle = usize;
    type Output = Result<(), HtmlLimit>;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> Self::Output {
        match self.refused.get() {
            Some(limit) => Err(limit),
            None => Ok(()),
        }
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> usize {
        DOCUMENT
    }

    fn elem_name<'a>(&'a self, target: &'a usize) -> Ref<'a, QualName> {
        Ref::map(self.nodes.borrow(), |nodes| {
            nodes[*target]
                .name
                .as_ref()
                .expect("the tree builder asks names of elements only")
        })
    }

    fn create_element(&self, name: QualName, _: Vec<Attribute>, flags: ElementFlags) -> usize {
        let made = self.elements.get() + 1;
        self.elements.set(made);
        if made > self.budget {
            self.refuse(HtmlLimit::Elements(self.budget));
        }
        let element = self.add(Some(name), None);
        if flags.template {
            let contents = self.add(None, Some(element));
            self.nodes.borrow_mut()[element].contents = Some(contents);
        }
        element
    }

    fn create_comment(&self, _: StrTendril) -> usize {
        self.add(None, None)
    }

    fn create_pi(&self, _: StrTendril, _: StrTendril) -> usize {
        self.add(None, None)
    }

    fn append(&self, parent: &usize, child: NodeOrText<usize>) {
        self.attach(*parent, child);
    }

    fn append_based_on_parent_node(
        &self,
        element: &usize,
        prev_element: &usize,
        child: NodeOrText<usize>,
    ) {
        let has_parent = self.nodes.borrow()[*element].parent.is_some();
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.attach(*prev_element, child);
        }
    }

    fn append_doctype_to_document(&self, _: StrTendril, _: StrTendril, _: StrTendril) {}

    fn get_template_contents(&self, target: &usize) -> usize {
        self.nodes.borrow()[*target]
            .contents
            .expect("the tree builder asks contents of templates only")
    }

    fn same_node(&self, x: &usize, y: &usize) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &usize, new_node: NodeOrText<usize>) {
        // Where among the siblings does not change how deep it is.
        let parent = self.nodes.borrow()[*sibling].parent;
        if let Some(parent) = parent {
            self.attach(parent, new_node);
        }
    }

    fn add_attrs_if_missing(&self, _: &usize, _: Vec<Attribute>) {}

    fn remove_from_parent(&self, target: &usize) {
        detach(&mut self.nodes.borrow_mut(), *target);
    }

    fn reparent_children(&self, node: &usize, new_parent: &usize) {
        let mut nodes = self.nodes.borrow_mut();
        let children = std::mem::take(&mut nodes[*node].children);
        for &c in &children {
            nodes[c].parent = Some(*new_parent);
        }
        nodes[*new_parent].children.extend(children);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_html_passes() {
        for html in [
            "",
            "plain text",
            "<p>one<p>two<ul><li>a<li>b</ul>",
            "<table><tr><td>1<td>2<tr><td>3</table>",
            "<b>bold <i>both</b> italic</i>",
            "<p>x</p>".repeat(10_000).as_str(),
            "<li>item".repeat(10_000).as_str(),
        ] {
            assert_eq!(check_html_shape(html), Ok(()), "{html:.60}");
        }
    }

    #[test]
    fn nesting_up_to_the_limit_passes_and_one_more_is_refused() {
        let nested = |n: usize| format!("{}x{}", "<div>".repeat(n), "</div>".repeat(n));
        assert_eq!(check_html_shape(&nested(MAX_HTML_NESTING)), Ok(()));
        assert_eq!(
            check_html_shape(&nested(MAX_HTML_NESTING + 1)),
            Err(HtmlLimit::Nesting)
        );
    }

    #[test]
    fn nesting_the_tags_do_not_show_is_refused() {
        for attack in [
            // Plain unclosed elements.
            "<div>".repeat(100_000),
            // End tags that match nothing are ignored by the parser.
            "<div></x>".repeat(50_000),
            // A formatting end tag around a block moves the block, it does
            // not close it.
            "<b><div></b>".repeat(50_000),
            // <li> and <dd> close only their own kind.
            "<li><dd>".repeat(50_000),
            // Template contents are a fragment of their own, still nested.
            "<template><div>".repeat(50_000),
            // In SVG, HTML's void elements are ordinary elements.
            format!("<svg>{}", "<area>".repeat(50_000)),
        ] {
            assert_eq!(
                check_html_shape(&attack),
                Err(HtmlLimit::Nesting),
                "{attack:.40}"
            );
        }
    }

    #[test]
    fn formatting_elements_the_parser_would_repeat_are_refused() {
        // Each paragraph re-opens every <b> before it: quadratic output.
        let attack: String = (0..20_000).map(|i| format!("<p><b id={i}></p>")).collect();
        assert!(check_html_shape(&attack).is_err());
        // Up to 255 of them, re-opened in every one of many paragraphs, stays
        // within the nesting limit but not within the element budget.
        let opened: String = (0..250).map(|i| format!("<p><b id={i}></p>")).collect();
        let attack = opened + &"<p>x</p>".repeat(50_000);
        assert!(matches!(
            check_html_shape(&attack),
            Err(HtmlLimit::Elements(_))
        ));
    }
}
