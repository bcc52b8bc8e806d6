#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| cog_fuzz::qpack(data));
