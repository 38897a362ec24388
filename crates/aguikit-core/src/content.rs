//! Message content: a plain string or an ordered list of content parts (text, image, audio,
//! video, document) whose media come from a [`PartSource`].

use crate::lenient::{self, LenientMember};
use crate::serde_util::{legacy_null_value, nn, wire_struct};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// The content of a user or tool message and of `TOOL_CALL_RESULT`: a string or parts.
///
/// ```
/// use aguikit_core::{Content, ContentPart};
/// let c: Content = "hello".into();
/// assert_eq!(c.to_text(), "hello");
/// let parts = Content::Parts(vec![ContentPart::text("a"), ContentPart::text("b")]);
/// assert_eq!(parts.to_text(), "ab");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// An ordered list of parts (may be empty).
    Parts(Vec<ContentPart>),
}

impl Content {
    /// Flattens to text the way the reference `contentToText` does: a string as is, parts
    /// as the concatenation of their text parts (media dropped).
    pub fn to_text(&self) -> String {
        match self {
            Content::Text(s) => s.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// True when the content has any non-text part (`contentHasMedia`).
    pub fn has_media(&self) -> bool {
        matches!(self, Content::Parts(p) if p.iter().any(|p| !matches!(p, ContentPart::Text(_))))
    }
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::Text(s)
    }
}

impl From<&str> for Content {
    fn from(s: &str) -> Self {
        Content::Text(s.to_owned())
    }
}

impl From<Vec<ContentPart>> for Content {
    fn from(p: Vec<ContentPart>) -> Self {
        Content::Parts(p)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Content, E> {
                Ok(Content::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Content, E> {
                Ok(Content::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(v) = seq.next_element::<Value>()? {
                    values.push(v);
                }
                lenient::from_values(values).map(Content::Parts)
            }
        }
        d.deserialize_any(V)
    }
}

/// One part of a message body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentPart {
    /// A text part.
    Text(TextPart),
    /// An image.
    Image(MediaPart),
    /// An audio clip.
    Audio(MediaPart),
    /// A video.
    Video(MediaPart),
    /// A document (PDF, ...).
    Document(MediaPart),
}

impl ContentPart {
    /// A text part with just its text.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text(TextPart {
            text: text.into(),
            id: None,
            metadata: None,
        })
    }

    /// An image part from a source.
    pub fn image(source: PartSource) -> Self {
        ContentPart::Image(MediaPart::new(source))
    }

    /// The wire `type` of this part.
    pub fn kind(&self) -> &'static str {
        match self {
            ContentPart::Text(_) => "text",
            ContentPart::Image(_) => "image",
            ContentPart::Audio(_) => "audio",
            ContentPart::Video(_) => "video",
            ContentPart::Document(_) => "document",
        }
    }
}

/// Deprecated 0.x name of [`ContentPart`].
pub type InputContent = ContentPart;

const PART_TYPES: &[&str] = &["text", "image", "audio", "video", "document"];
const SOURCE_TYPES: &[&str] = &["data", "url", "file"];

impl LenientMember for ContentPart {
    const WHAT: &'static str = "content part";

    fn recognised(v: &Value) -> Result<(), String> {
        lenient::check_tag(v, "type", PART_TYPES)?;
        // An unknown source type sits in a required position: the whole part goes.
        match v.get("source") {
            Some(src @ Value::Object(_)) => {
                lenient::check_tag(src, "type", SOURCE_TYPES).map_err(|e| format!("source: {e}"))
            }
            _ => Ok(()),
        }
    }
}

wire_struct! {
    /// A text part.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct TextPart {
        /// The text.
        pub text: String,
        /// Identifies the part within its message (reserved).
        pub id: Option<String> ["nn"],
        /// Any non-null JSON (e.g. a search hit's source).
        pub metadata: Option<Value> ["legacy_null_value"],
    }
}

wire_struct! {
    /// An image, audio, video or document part.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct MediaPart {
        /// Where the bytes are.
        pub source: PartSource,
        /// Identifies the part within its message (reserved).
        pub id: Option<String> ["nn"],
        /// Any non-null JSON (e.g. `{"filename": ...}`).
        pub metadata: Option<Value> ["legacy_null_value"],
    }
}

impl MediaPart {
    /// A media part with only a source.
    pub fn new(source: PartSource) -> Self {
        MediaPart {
            source,
            id: None,
            metadata: None,
        }
    }
}

/// Where a media part's bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum PartSource {
    /// Bytes inline, base64.
    Data(DataSource),
    /// A URL.
    Url(UrlSource),
    /// A handle already held by a provider (new in 1.0).
    File(FileSource),
}

/// Deprecated 0.x name of [`PartSource`].
pub type InputContentSource = PartSource;

/// Inline bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DataSource {
    /// Base64 bytes (not checked).
    pub value: String,
    /// MIME type (required for inline data).
    pub mime_type: String,
}

wire_struct! {
    /// Bytes at a URL.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct UrlSource {
        /// The URL (not checked).
        pub value: String,
        /// MIME type.
        pub mime_type: Option<String> ["nn"],
    }
}

wire_struct! {
    /// A provider-held file handle.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct FileSource {
        /// The opaque handle.
        pub value: String,
        /// Lowercase vendor id (`openai`, `anthropic`, `google`).
        pub provider: Option<String> ["nn"],
        /// MIME type.
        pub mime_type: Option<String> ["nn"],
    }
}

/// Upgrades retired `binary` parts of a message's content array in place (reference CB10):
/// `data`/`url` become a media part whose kind follows the MIME prefix, `filename` moves to
/// `metadata`; an upgraded part equal to a modern part already present is dropped. Also
/// removes `metadata: null` from media parts.
pub(crate) fn upgrade_legacy_parts(content: &mut Value) {
    let Some(parts) = content.as_array_mut() else {
        return;
    };
    if !parts
        .iter()
        .any(|p| p.get("type").and_then(Value::as_str) == Some("binary"))
    {
        for p in parts.iter_mut() {
            drop_null_media_metadata(p);
        }
        return;
    }
    let originals: Vec<Value> = parts.clone();
    let mut out = Vec::with_capacity(parts.len());
    for mut p in std::mem::take(parts) {
        if p.get("type").and_then(Value::as_str) == Some("binary")
            && let Some(up) = upgrade_binary(&p)
        {
            crate::warning::report("legacy binary content part upgraded");
            let duplicate = originals.iter().any(|o| same_media(o, &up));
            if !duplicate {
                out.push(up);
            }
            continue;
        }
        drop_null_media_metadata(&mut p);
        out.push(p);
    }
    *parts = out;
}

fn drop_null_media_metadata(p: &mut Value) {
    if let Some(obj) = p.as_object_mut() {
        let media = matches!(
            obj.get("type").and_then(Value::as_str),
            Some("image" | "audio" | "video" | "document")
        );
        if media && obj.get("metadata") == Some(&Value::Null) {
            obj.shift_remove("metadata");
        }
    }
}

fn upgrade_binary(p: &Value) -> Option<Value> {
    let mime = p.get("mimeType")?.as_str()?;
    let kind = if mime.starts_with("image/") {
        "image"
    } else if mime.starts_with("audio/") {
        "audio"
    } else if mime.starts_with("video/") {
        "video"
    } else {
        "document"
    };
    // Empty strings count as absent, as in the reference.
    let non_empty = |k: &str| p.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let source = if let Some(data) = non_empty("data") {
        serde_json::json!({"type": "data", "value": data, "mimeType": mime})
    } else if let Some(url) = non_empty("url") {
        serde_json::json!({"type": "url", "value": url, "mimeType": mime})
    } else {
        return None;
    };
    let mut part = serde_json::Map::new();
    part.insert("type".into(), kind.into());
    part.insert("source".into(), source);
    if let Some(f) = non_empty("filename") {
        part.insert("metadata".into(), serde_json::json!({ "filename": f }));
    }
    Some(Value::Object(part))
}

fn same_media(existing: &Value, upgraded: &Value) -> bool {
    if existing.get("type") != upgraded.get("type") {
        return false;
    }
    let (Some(a), Some(b)) = (existing.get("source"), upgraded.get("source")) else {
        return false;
    };
    let wanted = upgraded.get("metadata").and_then(|m| m.get("filename"));
    a.get("type") == b.get("type")
        && a.get("value") == b.get("value")
        && a.get("mimeType").is_some()
        && a.get("mimeType") == b.get("mimeType")
        && match wanted {
            None => true,
            Some(f) => existing.get("metadata").and_then(|m| m.get("filename")) == Some(f),
        }
}
