//! How far an HTML value may go before the sanitiser refuses it: what the
//! shape check (`sanitize/shape.rs`) holds and a refusal (`StoreError`) names.

/// How deep elements may nest in an HTML property. Real content nests a few
/// levels (a list in a table cell in a blockquote); 256 leaves room for any of
/// it and keeps the parser's per-tag work small.
pub const MAX_HTML_NESTING: usize = 256;

/// Why an HTML value was refused before sanitising.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HtmlLimit {
    #[error("elements are nested deeper than {MAX_HTML_NESTING} levels")]
    Nesting,
    #[error(
        "it makes more elements than its text spells out (at most {0}); mis-nested formatting tags make the parser repeat them"
    )]
    Elements(usize),
}
