# How Stella's release binaries are built, for install.sh and the benchmarks (source it):
#   release_args   extra arguments for `cargo build --release` / `cargo install`
#   release_dir    where `cargo build --release "${release_args[@]}"` leaves the binaries
#   release_how    one line saying how, for people
#
# On Linux with glibc, when the C library's static archive is there (Debian and Ubuntu ship it in
# libc6-dev; Fedora needs glibc-static), the binary is linked statically and not as a PIE. The
# guard and the hook run before every edit an agent makes, and most of their time was start-up:
# the dynamic loader mapping libc, then relocating 13,000 addresses, each page it touches a page
# fault. A static non-PIE binary has neither (docs/performance.md). The cost: the binary's own
# code sits at a fixed address (its heap, stack and mappings are still randomised), a trade
# many static tools make. Static linking needs an explicit --target, so that proc-macro crates,
# built for the host, stay dynamic. Elsewhere the build is cargo's default. A RUSTFLAGS in the
# environment takes precedence over these flags, as always with cargo.
release_host=$(rustc -vV | sed -n 's/^host: //p')
release_args=()
release_dir=target/release
release_how="cargo's default build"
case "$release_host" in
*-linux-gnu)
    if [[ "$(cc -print-file-name=libc.a 2>/dev/null)" == /* ]]; then
        release_args=(--target "$release_host"
            --config "target.$release_host.rustflags=[\"-C\", \"target-feature=+crt-static\", \"-C\", \"relocation-model=static\"]")
        release_dir="target/$release_host/release"
        release_how="statically linked (glibc's libc.a), not a PIE: it starts faster"
    else
        release_how="dynamically linked: no libc.a here (glibc-static or libc6-dev provides it)"
    fi
    ;;
esac
