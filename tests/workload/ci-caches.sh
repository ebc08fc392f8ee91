# Tools that write their caches in the home directory (the ci profile): npm, pip, cargo.
mkdir -p w/ci && cd w/ci || exit 1
# npm: pack a local package and add it to ~/.npm's cache.
mkdir -p cpkg && printf '{"name":"wl-cached","version":"1.0.0"}\n' > cpkg/package.json
(cd cpkg && npm pack -q >/dev/null 2>&1) && npm cache add ./cpkg/wl-cached-1.0.0.tgz >/dev/null 2>&1 \
  && test -d "$HOME/.npm/_cacache" && npm cache ls 2>/dev/null | grep -q wl-cached \
  || grep -rlq wl-cached "$HOME/.npm/_cacache/index-v5" && echo "OK npm-cache"
# pip: building a wheel from a local sdist stores it in ~/.cache/pip/wheels.
mkdir -p spkg/wlsdist && printf 'from setuptools import setup\nsetup(name="wlsdist", version="1.0", packages=["wlsdist"])\n' > spkg/setup.py
printf 'X = 1\n' > spkg/wlsdist/__init__.py
(cd spkg && python3 setup.py -q sdist >/dev/null 2>&1) \
  && python3 -m venv --system-site-packages venv \
  && venv/bin/pip install -q --disable-pip-version-check --no-index --no-build-isolation spkg/dist/wlsdist-1.0.tar.gz \
  && test "$(venv/bin/pip cache dir)" = "$HOME/.cache/pip" \
  && find "$HOME/.cache/pip/wheels" -name 'wlsdist-1.0-*.whl' | grep -q . && echo "OK pip-cache"
# cargo: a dependency from a local registry is unpacked into ~/.cargo/registry/src.
export PATH="$WL_RUST_BIN:$PATH"
if [ -n "$WL_RUST_BIN" ]; then
  mkdir -p dep/src reg/index/wl/de app/src app/.cargo
  printf '[package]\nname = "wldep"\nversion = "0.1.0"\nedition = "2021"\ndescription = "d"\nlicense = "MIT"\n' > dep/Cargo.toml
  printf 'pub fn seven() -> u32 { 7 }\n' > dep/src/lib.rs
  (cd dep && cargo package -q --offline --no-verify --allow-dirty) \
    && cp dep/target/package/wldep-0.1.0.crate reg/ \
    && sum=$(sha256sum reg/wldep-0.1.0.crate | cut -d' ' -f1) \
    && printf '{"name":"wldep","vers":"0.1.0","deps":[],"cksum":"%s","features":{},"yanked":false}\n' "$sum" > reg/index/wl/de/wldep \
    && printf '[source.crates-io]\nreplace-with = "wl"\n[source.wl]\nlocal-registry = "%s/reg"\n' "$PWD" > app/.cargo/config.toml \
    && printf '[package]\nname = "wlapp"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\nwldep = "0.1"\n' > app/Cargo.toml \
    && printf 'fn main(){println!("dep {}", wldep::seven());}\n' > app/src/main.rs \
    && (cd app && cargo build --offline -q && ./target/debug/wlapp | grep -qx 'dep 7') \
    && ls -d "$HOME"/.cargo/registry/src/*/wldep-0.1.0 >/dev/null && echo "OK cargo-registry"
fi
