// Links libplexus_c. PLEXUS_LIB_DIR names the folder holding it (the build
// tree's lib/, or an install's lib/); the test binaries find it there at run
// time through an rpath.
fn main() {
    println!("cargo:rerun-if-env-changed=PLEXUS_LIB_DIR");
    if let Ok(dir) = std::env::var("PLEXUS_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
    println!("cargo:rustc-link-lib=dylib=plexus_c");
}
