//! RFC 6902 JSON Patch operations and their application.
