//! The `Content-Type` of a file or a template's output, from its name.

use http::HeaderValue;

/// The `Content-Type` for a file or template name, from its extension.
pub fn content_type_for(name: &str) -> HeaderValue {
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let mime = match ext {
        "tpl" | "html" | "htm" => "text/html; charset=utf-8".to_string(),
        "json" => "application/json".to_string(),
        _ => {
            let guess = mime_guess::from_ext(ext).first_or_octet_stream();
            if guess.type_() == "text"
                || guess.subtype() == "javascript"
                || guess.subtype() == "xml"
            {
                format!("{guess}; charset=utf-8")
            } else {
                guess.to_string()
            }
        }
    };
    HeaderValue::from_str(&mime).unwrap_or(HeaderValue::from_static("application/octet-stream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type_for("home.tpl"), "text/html; charset=utf-8");
        assert_eq!(content_type_for("a.css"), "text/css; charset=utf-8");
        assert_eq!(content_type_for("x.json"), "application/json");
        assert_eq!(content_type_for("logo.png"), "image/png");
    }
}
