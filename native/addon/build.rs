fn main() {
    napi_build::setup();
    // On macOS (where napi-build links with `-undefined dynamic_lookup`, Node's symbols being
    // found when the addon loads), the library is named by what it is, not by the path it was
    // built at.
    if std::env::var("CARGO_CFG_TARGET_VENDOR").as_deref() == Ok("apple") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/cog-native.node");
    }
}
