fn main() {
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    // napi-build's setup for windows-gnu links a libnode.dll (MSYS2's Node); Node for Windows is
    // node.exe, whose libuv functions the addon imports itself (src/uv.rs) and whose Node-API
    // functions napi-sys looks up at load: nothing to link.
    if !(target("CARGO_CFG_TARGET_OS") == "windows" && target("CARGO_CFG_TARGET_ENV") == "gnu") {
        napi_build::setup();
    }
    // On macOS (where napi-build links with `-undefined dynamic_lookup`, Node's symbols being
    // found when the addon loads), the library is named by what it is, not by the path it was
    // built at.
    if target("CARGO_CFG_TARGET_VENDOR") == "apple" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/cog-native.node");
    }
}
