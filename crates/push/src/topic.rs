//! Topics (`rsc/42`, `site/chat/lobby`) and subscription filters with MQTT-style
//! wildcards: `+` matches exactly one segment, `#` (last only) any number, including
//! none.

use std::fmt;
use std::sync::Arc;

use crate::PushError;

/// Longest topic or filter accepted, in bytes.
const MAX_TOPIC_LEN: usize = 256;

/// A concrete topic that messages are published on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Topic(Arc<str>);

impl Topic {
    pub fn parse(raw: &str) -> Result<Topic, PushError> {
        check_shape(raw)?;
        if raw
            .split('/')
            .any(|s| s == "+" || s == "#" || s.contains(['+', '#']))
        {
            return Err(PushError::BadTopic(format!(
                "{raw:?}: wildcards are for subscriptions only"
            )));
        }
        Ok(Topic(raw.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Topic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn check_shape(raw: &str) -> Result<(), PushError> {
    if raw.is_empty() || raw.len() > MAX_TOPIC_LEN {
        return Err(PushError::BadTopic(format!(
            "{raw:?}: must be 1 to {MAX_TOPIC_LEN} bytes"
        )));
    }
    if raw.split('/').any(str::is_empty) {
        return Err(PushError::BadTopic(format!("{raw:?}: empty segment")));
    }
    if raw.chars().any(|c| c.is_control()) {
        return Err(PushError::BadTopic(format!("{raw:?}: control characters")));
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Segment {
    Exact(Box<str>),
    One,
    Rest,
}

/// A subscription: a topic, possibly with `+` and `#` wildcards.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TopicFilter {
    raw: Arc<str>,
    segments: Vec<Segment>,
}

impl TopicFilter {
    pub fn parse(raw: &str) -> Result<TopicFilter, PushError> {
        check_shape(raw)?;
        let parts: Vec<&str> = raw.split('/').collect();
        let mut segments = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            segments.push(match *part {
                "+" => Segment::One,
                "#" if i + 1 == parts.len() => Segment::Rest,
                p if p.contains(['+', '#']) => {
                    return Err(PushError::BadTopic(format!(
                        "{raw:?}: '+' fills a whole segment and '#' must be the last one"
                    )));
                }
                p => Segment::Exact(p.into()),
            });
        }
        Ok(TopicFilter {
            raw: raw.into(),
            segments,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The topic itself when the filter has no wildcard.
    pub fn as_topic(&self) -> Option<Topic> {
        self.segments
            .iter()
            .all(|s| matches!(s, Segment::Exact(_)))
            .then(|| Topic(self.raw.clone()))
    }

    pub fn matches(&self, topic: &Topic) -> bool {
        let mut parts = topic.as_str().split('/');
        for segment in &self.segments {
            match segment {
                Segment::Rest => return true,
                Segment::One => {
                    if parts.next().is_none() {
                        return false;
                    }
                }
                Segment::Exact(want) => {
                    if parts.next() != Some(want) {
                        return false;
                    }
                }
            }
        }
        parts.next().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(filter: &str, topic: &str) -> bool {
        TopicFilter::parse(filter)
            .unwrap()
            .matches(&Topic::parse(topic).unwrap())
    }

    #[test]
    fn wildcards_match_like_mqtt() {
        assert!(m("rsc/42", "rsc/42"));
        assert!(!m("rsc/42", "rsc/421"));
        assert!(m("rsc/+", "rsc/42"));
        assert!(!m("rsc/+", "rsc/42/edges"));
        assert!(m("site/#", "site/chat/lobby"));
        assert!(m("site/#", "site"));
        assert!(m("#", "anything/at/all"));
        assert!(m("+/chat/+", "site/chat/lobby"));
        assert!(!m("+/chat/+", "site/chat"));
    }

    #[test]
    fn bad_topics_and_filters_are_refused() {
        for bad in ["", "a//b", "/a", "a/", "a/+/b", "a/#", "a\nb"] {
            assert!(Topic::parse(bad).is_err(), "{bad:?}");
        }
        for bad in ["a/#/b", "a/b+", "a/#x", ""] {
            assert!(TopicFilter::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Topic::parse(&"a".repeat(300)).is_err());
    }
}
