//! Compiles `proto/cuzk/v1/proving.proto` with protox (a protobuf compiler
//! in Rust), so a build needs no `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/cuzk/v1/proving.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
