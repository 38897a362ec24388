//! `event_types!`: the one table an event is declared in.
//!
//! Each family file (`lifecycle.rs`, `text.rs`, ...) lists its events once:
//!
//! ```text
//! /// `TEXT_MESSAGE_START`: Opens a streamed text message.
//! TextMessageStart {
//!     /// Id of the message being built.
//!     message_id "messageId": String,
//!     /// Author role (absent = assistant).
//!     role "role" with_role: Option<TextMessageRole>,
//! }
//! ```
//!
//! A field is `name "wireName": Type` (required) or `name "wireName" with_name: Option<T>`
//! (optional, with the name of its builder method), optionally followed by
//! `["deserializer"]` when the wire rule is not the default one (a required field is read
//! as its type; an optional one rejects `null`, through `serde_util::nn`). Every event
//! also gets the base fields `timestamp`, `rawEvent` and `metadata`.
//!
//! From that row come: the struct with its serde attributes (JSON exactly as on the wire),
//! `new` (the required fields, in order) and the `with_*` builders, the JSON writer
//! (`json::WriteFields`: a required field is always written, an optional one when present,
//! so a required field is never declared as an `Option`), the fast path's reader
//! for the event (`fast::FastEvent`: each member by its wire name, read as its type's
//! `fast::FastField` reads it) and the accessors behind [`Event::subagent_run_id`]
//! (`EventFields`). The protobuf numbering is declared apart, in `codec/proto/fields.rs`,
//! because it belongs to the `.proto` schema: a field the schema lacks is not written
//! there, as the reference encoder drops it; a test ties every field of this table to a
//! protobuf row or to the explicit list of fields without one (`EventFields::FIELDS` is
//! what it reads).
//!
//! [`Event::subagent_run_id`]: super::Event::subagent_run_id

/// Declares event structs from their field table (see the module docs).
macro_rules! event_types {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident { $($body:tt)* }
    )*) => {
        $(
            $crate::event::macros::event_types! { @field [$(#[doc = $doc])*] $name {} {} {} {} {} $($body)* }
        )*
    };

    // An optional string, with its own deserializer.
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal $with:ident : Option<String> [$de:literal] , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @push $sd $name $fs $ps $is $ss $ls
            field {
                $(#[doc = $d])*
                #[serde(rename = $w, default, skip_serializing_if = "Option::is_none", deserialize_with = $de)]
                pub $f: Option<String>,
            }
            param {} init {}
            setter { $crate::event::macros::event_types!(@setter $f $with impl Into<String>, v => v.into()); }
            list { ($f $w Option<String>) }
            rest { $($rest)* }
        }
    };
    // An optional string or value without a deserializer of its own rejects `null`: the
    // row is read again with `serde_util::nn` named (the string row first, so that its
    // `String` is still a plain token for the string arm above).
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal $with:ident : Option<String> , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @field $sd $name $fs $ps $is $ss $ls
            $(#[doc = $d])* $f $w $with : Option<String> ["crate::serde_util::nn"] , $($rest)*
        }
    };
    // An optional boxed value (built from the unboxed one).
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal $with:ident : Option<Box<$t:ty>> , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @push $sd $name $fs $ps $is $ss $ls
            field {
                $(#[doc = $d])*
                #[serde(rename = $w, default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::serde_util::nn")]
                pub $f: Option<Box<$t>>,
            }
            param {} init {}
            setter { $crate::event::macros::event_types!(@setter $f $with $t, v => Box::new(v)); }
            list { ($f $w Option<Box<$t>>) }
            rest { $($rest)* }
        }
    };
    // An optional value, with its own deserializer.
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal $with:ident : Option<$t:ty> [$de:literal] , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @push $sd $name $fs $ps $is $ss $ls
            field {
                $(#[doc = $d])*
                #[serde(rename = $w, default, skip_serializing_if = "Option::is_none", deserialize_with = $de)]
                pub $f: Option<$t>,
            }
            param {} init {}
            setter { $crate::event::macros::event_types!(@setter $f $with $t, v => v); }
            list { ($f $w Option<$t>) }
            rest { $($rest)* }
        }
    };
    // See "without a deserializer of its own" above.
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal $with:ident : Option<$t:ty> , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @field $sd $name $fs $ps $is $ss $ls
            $(#[doc = $d])* $f $w $with : Option<$t> ["crate::serde_util::nn"] , $($rest)*
        }
    };
    // A required string (`new` takes anything that converts).
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal : String , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @push $sd $name $fs $ps $is $ss $ls
            field { $(#[doc = $d])* #[serde(rename = $w)] pub $f: String, }
            param { $f: impl Into<String>, } init { $f: $f.into(), }
            setter {}
            list { ($f $w String) }
            rest { $($rest)* }
        }
    };
    // Required content (`new` takes anything that converts).
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal : Content , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @push $sd $name $fs $ps $is $ss $ls
            field { $(#[doc = $d])* #[serde(rename = $w)] pub $f: Content, }
            param { $f: impl Into<Content>, } init { $f: $f.into(), }
            setter {}
            list { ($f $w Content) }
            rest { $($rest)* }
        }
    };
    // A required value, with its own deserializer.
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal : $t:ty [$de:literal] , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @push $sd $name $fs $ps $is $ss $ls
            field { $(#[doc = $d])* #[serde(rename = $w, deserialize_with = $de)] pub $f: $t, }
            param { $f: $t, } init { $f, }
            setter {}
            list { ($f $w $t) }
            rest { $($rest)* }
        }
    };
    // A required value.
    (@field $sd:tt $name:ident $fs:tt $ps:tt $is:tt $ss:tt $ls:tt
        $(#[doc = $d:literal])* $f:ident $w:literal : $t:ty , $($rest:tt)*
    ) => {
        $crate::event::macros::event_types! { @push $sd $name $fs $ps $is $ss $ls
            field { $(#[doc = $d])* #[serde(rename = $w)] pub $f: $t, }
            param { $f: $t, } init { $f, }
            setter {}
            list { ($f $w $t) }
            rest { $($rest)* }
        }
    };

    // Appends one field's pieces to the accumulators and goes on with the rest.
    (@push $sd:tt $name:ident
        {$($fs:tt)*} {$($ps:tt)*} {$($is:tt)*} {$($ss:tt)*} {$($ls:tt)*}
        field {$($f:tt)*} param {$($p:tt)*} init {$($i:tt)*} setter {$($s:tt)*} list {$($l:tt)*}
        rest {$($rest:tt)*}
    ) => {
        $crate::event::macros::event_types! { @field $sd $name
            {$($fs)* $($f)*} {$($ps)* $($p)*} {$($is)* $($i)*} {$($ss)* $($s)*} {$($ls)* $($l)*}
            $($rest)*
        }
    };

    (@setter $f:ident $with:ident $arg:ty, $v:ident => $wrap:expr) => {
        #[doc = concat!("Sets `", stringify!($f), "`.")]
        pub fn $with(mut self, $v: $arg) -> Self {
            self.$f = Some($wrap);
            self
        }
    };

    // Every field read: the struct and what comes from it.
    (@field [$($sd:tt)*] $name:ident
        {$($fs:tt)*} {$($ps:tt)*} {$($is:tt)*} {$($ss:tt)*} {$(($lf:ident $lw:literal $lt:ty))*}
    ) => {
        $($sd)*
        #[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        pub struct $name {
            $($fs)*
            /// When the event was produced (milliseconds since the Unix epoch by convention).
            #[serde(
                rename = "timestamp",
                default,
                skip_serializing_if = "Option::is_none",
                deserialize_with = "crate::serde_util::timestamp"
            )]
            pub timestamp: Option<i64>,
            // Boxed, as `metadata` is: few events carry either, and every event is
            // moved several times on its way (the two inline took 144 of the 336 bytes
            // of an `Event`, which is now 208).
            /// The provider-native event this one was translated from (never `null`).
            #[serde(
                rename = "rawEvent",
                default,
                skip_serializing_if = "Option::is_none",
                deserialize_with = "crate::serde_util::legacy_null_boxed"
            )]
            pub raw_event: Option<Box<serde_json::Value>>,
            /// Open metadata (a JSON object).
            #[serde(
                rename = "metadata",
                default,
                skip_serializing_if = "Option::is_none",
                deserialize_with = "crate::serde_util::nn_object_boxed"
            )]
            pub metadata: Option<Box<$crate::metadata::Metadata>>,
        }

        impl $name {
            #[doc = concat!("A `", stringify!($name), "` event with its required fields; optional fields are absent.")]
            pub fn new($($ps)*) -> Self {
                $name {
                    $($is)*
                    ..Default::default()
                }
            }
            $($ss)*
            /// Sets `timestamp` (milliseconds since the Unix epoch by convention).
            pub fn with_timestamp(mut self, ms: i64) -> Self {
                self.timestamp = Some(ms);
                self
            }
            /// Sets `rawEvent`.
            pub fn with_raw_event(mut self, raw: serde_json::Value) -> Self {
                self.raw_event = Some(Box::new(raw));
                self
            }
            /// Sets `metadata`.
            pub fn with_metadata(mut self, metadata: $crate::metadata::Metadata) -> Self {
                self.metadata = Some(Box::new(metadata));
                self
            }
        }

        impl $crate::event::EventFields for $name {
            const FIELDS: &'static [&'static str] = &[$(stringify!($lf)),*];
            #[inline]
            fn subagent(&self) -> Option<&str> {
                $crate::event::macros::event_types!(@subagent self get $($lf)*)
            }
            #[inline]
            fn subagent_tag_mut(&mut self) -> Option<&mut Option<String>> {
                $crate::event::macros::event_types!(@subagent self tag_mut $($lf)*)
            }
        }

        impl $crate::event::json::WriteFields for $name {
            #[inline]
            fn write_fields(&self, out: &mut Vec<u8>) {
                use $crate::event::json::JsonField;
                $(
                    if !JsonField::absent(&self.$lf) {
                        out.extend_from_slice(concat!(",\"", $lw, "\":").as_bytes());
                        JsonField::write(&self.$lf, out);
                    }
                )*
                if !JsonField::absent(&self.timestamp) {
                    out.extend_from_slice(b",\"timestamp\":");
                    JsonField::write(&self.timestamp, out);
                }
                if !JsonField::absent(&self.raw_event) {
                    out.extend_from_slice(b",\"rawEvent\":");
                    JsonField::write(&self.raw_event, out);
                }
                if !JsonField::absent(&self.metadata) {
                    out.extend_from_slice(b",\"metadata\":");
                    JsonField::write(&self.metadata, out);
                }
            }
        }

        impl $crate::event::fast::FastEvent for $name {
            const FAST: bool = !(false $(|| <$lt as $crate::event::fast::FastField>::NEVER)*);

            #[inline]
            fn build(r: &mut $crate::event::fast::Reader<'_>) -> Option<Self> {
                use $crate::event::fast::FastField;
                let mut st = $crate::event::fast::Stacks::default();
                $( let mut $lf: Option<$lt> = None; )*
                let mut ts = None;
                r.members(|key, r| match key {
                    $(
                        $lw if $lf.is_none() => {
                            $lf = Some(<$lt as FastField>::read(r, &mut st)?);
                            Some(())
                        }
                    )*
                    "timestamp" => $crate::event::fast::timestamp(&mut ts, r.tok()?),
                    "type" => $crate::event::fast::type_member(r.tok()?),
                    _ => None,
                })?;
                Some($name {
                    $(
                        $lf: match $lf {
                            Some(v) => v,
                            None => <$lt as FastField>::absent()?,
                        },
                    )*
                    timestamp: ts,
                    raw_event: None,
                    metadata: None,
                })
            }
        }
    };

    // The `subagentRunId` field, if the event has one.
    (@subagent $self:ident $how:ident) => { None };
    (@subagent $self:ident get subagent_run_id $($rest:ident)*) => {
        $crate::event::SubagentField::get(&$self.subagent_run_id)
    };
    (@subagent $self:ident tag_mut subagent_run_id $($rest:ident)*) => {
        $crate::event::SubagentField::tag_mut(&mut $self.subagent_run_id)
    };
    (@subagent $self:ident $how:ident $other:ident $($rest:ident)*) => {
        $crate::event::macros::event_types!(@subagent $self $how $($rest)*)
    };
}

pub(crate) use event_types;
