#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| cog_fuzz::h3frames(data));
