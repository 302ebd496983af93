//! Links the server's library so that the loader never unloads it.
//!
//! MariaDB unloads a library once no function and no plugin of it is left
//! (`DROP FUNCTION` of each, `UNINSTALL SONAME`). Unloaded, its generator
//! would vanish without closing its mark file's lock, and the library loaded
//! again would find its own server holding the lock, refusing to issue until
//! the server restarts; the statics the server had written into would be
//! gone under it. With `-z nodelete` the library, its one generator and its
//! copied settings stay for the life of the server process, and a function
//! created again finds them (see `src/issuer.rs`).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
