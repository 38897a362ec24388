//! Generates the protobuf message types of the `proto` feature from `proto/*.proto`, with a
//! pure-Rust compiler (protox): no `protoc` is needed. Does nothing without the feature.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // A build script is compiled with its package's features, so the cfg is the check.
    #[cfg(feature = "proto")]
    generate();
}

#[cfg(feature = "proto")]
fn generate() {
    const FILES: [&str; 3] = [
        "proto/events.proto",
        "proto/types.proto",
        "proto/patch.proto",
    ];
    for f in FILES {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = match protox::compile(FILES, ["proto"]) {
        Ok(fds) => fds,
        Err(e) => panic!("compiling the AG-UI protobuf schema: {e}"),
    };
    // google.protobuf.Value and Struct are hand-written: they must keep JSON object key
    // order (the reference writes properties in JavaScript order), which prost-types'
    // BTreeMap-backed Struct cannot.
    let mut config = prost_build::Config::new();
    config
        .extern_path(
            ".google.protobuf.Value",
            "crate::codec::proto::wkt::ProtoValue",
        )
        .extern_path(
            ".google.protobuf.Struct",
            "crate::codec::proto::wkt::ProtoStruct",
        );
    if let Err(e) = config.compile_fds(fds) {
        panic!("generating the AG-UI protobuf types: {e}");
    }
}
