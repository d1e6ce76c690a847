//! What travels between nodes: one JSON envelope per notification, naming the
//! node instance that sent it.
//!
//! Dependency keys travel as the text they are (`DependencyKey::as_str`) and
//! become keys again with `DependencyKey::new`: nothing here builds or parses
//! one. A notification carries at most [`INLINE_LIMIT`] bytes (PostgreSQL
//! refuses 8000 and more); a larger envelope is kept in the outbox and only its
//! row id travels ([`Body::Stored`]).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use bulwark_store::{ChangeEvent, ChangeKind, DependencyKey, ResourceChange, ResourceId};

/// The largest notification payload sent; PostgreSQL's limit is 8000 bytes.
pub const INLINE_LIMIT: usize = 7_900;

#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope {
    /// The sending node instance's id (random per start).
    pub origin: String,
    // Not flattened: serde's flatten buffers the body, and a RawValue payload
    // cannot be read back from that buffer.
    pub body: Body,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// A committed write's change.
    Change(WireChange),
    /// Push publications, in the order they were published.
    Push(Vec<Publication>),
    /// The envelope is in the outbox, row `id`.
    Stored(i64),
    /// A listener's proof that its connection still delivers.
    Ping(u64),
    /// The sending node's live figures of the last second (the site's
    /// `Figures`, for the other nodes' dashboards).
    Figures(Box<RawValue>),
}

#[derive(Debug, Serialize, Deserialize)]
pub struct WireChange {
    pub keys: Vec<String>,
    /// (resource id, "i" | "u" | "d").
    pub resources: Vec<(i64, String)>,
    /// Anything may have changed (a restore): absent from older nodes'
    /// messages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub everything: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Publication {
    pub topic: String,
    pub payload: Box<RawValue>,
}

impl WireChange {
    pub fn from_event(event: &ChangeEvent) -> WireChange {
        WireChange {
            keys: event.keys.iter().map(|k| k.as_str().to_owned()).collect(),
            resources: event
                .resources
                .iter()
                .map(|r| {
                    let kind = match r.kind {
                        ChangeKind::Inserted => "i",
                        ChangeKind::Updated => "u",
                        ChangeKind::Deleted => "d",
                    };
                    (r.id.0, kind.to_owned())
                })
                .collect(),
            everything: event.everything,
        }
    }

    /// The change event again; `None` for a kind this node does not know (a
    /// newer node's), which the caller treats as "anything may have changed".
    pub fn into_event(self) -> Option<ChangeEvent> {
        let resources = self
            .resources
            .into_iter()
            .map(|(id, kind)| {
                let kind = match kind.as_str() {
                    "i" => ChangeKind::Inserted,
                    "u" => ChangeKind::Updated,
                    "d" => ChangeKind::Deleted,
                    _ => return None,
                };
                Some(ResourceChange {
                    id: ResourceId(id),
                    kind,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(ChangeEvent {
            keys: self.keys.into_iter().map(DependencyKey::new).collect(),
            resources,
            everything: self.everything,
        })
    }
}

impl Envelope {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an envelope serialises")
    }
}

/// The kinds of [`Body`] this node reads, as they are named on the wire.
const KNOWN_KINDS: &[&str] = &["change", "push", "stored", "ping", "figures"];

/// For a notification that is not an [`Envelope`] this node can read: the
/// kind of its body when it is a well-formed envelope of a kind this node
/// does not know (a newer node's, during a rolling upgrade), which carries no
/// change for it (changes always travel as `change`); `None` for anything
/// else, which may have been a change.
pub fn unknown_kind(note: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Loose {
        #[allow(dead_code)]
        origin: String,
        body: serde_json::Map<String, serde_json::Value>,
    }
    let loose: Loose = serde_json::from_str(note).ok()?;
    let mut kinds = loose.body.keys();
    let kind = kinds.next()?;
    (kinds.next().is_none() && !KNOWN_KINDS.contains(&kind.as_str())).then(|| kind.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_survives_the_wire() {
        let event = ChangeEvent {
            keys: vec![DependencyKey::new("rsc:1"), DependencyKey::new("cat:text")],
            resources: vec![
                ResourceChange {
                    id: ResourceId(1),
                    kind: ChangeKind::Inserted,
                },
                ResourceChange {
                    id: ResourceId(2),
                    kind: ChangeKind::Deleted,
                },
            ],
            everything: false,
        };
        let json = Envelope {
            origin: "x".into(),
            body: Body::Change(WireChange::from_event(&event)),
        }
        .to_json();
        let back: Envelope = serde_json::from_str(&json).unwrap();
        assert_eq!(back.origin, "x");
        let Body::Change(change) = back.body else {
            panic!("{json}")
        };
        assert_eq!(change.into_event(), Some(event));
    }

    #[test]
    fn a_newer_nodes_kind_of_body_is_told_from_garbage() {
        let newer = r#"{"origin":"web2/1","body":{"weather":{"sunny":true}}}"#;
        assert!(serde_json::from_str::<Envelope>(newer).is_err());
        assert_eq!(unknown_kind(newer).as_deref(), Some("weather"));
        // What could have been a change is never passed over.
        for unread in [
            r#"{"origin":"web2/1","body":{"change":{"keys":7}}}"#,
            r#"{"origin":"web2/1","body":{"a":1,"b":2}}"#,
            r#"{"origin":"web2/1","body":"change"}"#,
            r#"{"body":{"weather":{}}}"#,
            "not json",
        ] {
            assert_eq!(unknown_kind(unread), None, "{unread}");
        }
        // Every kind this node sends, it knows.
        for body in [Body::Ping(1), Body::Stored(2)] {
            let json = Envelope {
                origin: "x".into(),
                body,
            }
            .to_json();
            let value: serde_json::Value = serde_json::from_str(&json).unwrap();
            let kind = value["body"]
                .as_object()
                .unwrap()
                .keys()
                .next()
                .unwrap()
                .clone();
            assert!(KNOWN_KINDS.contains(&kind.as_str()), "{kind}");
        }
    }

    #[test]
    fn publications_survive_the_wire() {
        let json = Envelope {
            origin: "x".into(),
            body: Body::Push(vec![Publication {
                topic: "site/a".into(),
                payload: RawValue::from_string(r#"{"n":[1,2]}"#.into()).unwrap(),
            }]),
        }
        .to_json();
        let back: Envelope = serde_json::from_str(&json).unwrap();
        let Body::Push(p) = back.body else {
            panic!("{json}")
        };
        assert_eq!(
            (p[0].topic.as_str(), p[0].payload.get()),
            ("site/a", r#"{"n":[1,2]}"#)
        );
    }

    #[test]
    fn an_unknown_change_kind_is_no_event() {
        let change = WireChange {
            keys: vec![],
            resources: vec![(1, "moved".into())],
            everything: false,
        };
        assert_eq!(change.into_event(), None);
    }
}
