#!/bin/sh
# Build ns-2.35 from the upstream tarball of Debian's source package ns2 2.35+dfsg-5 (its
# Debian diff is not served here, so without Debian's patches; the traces still equal
# /usr/bin/ns's on the runs compared) with event-key-order.patch applied, into DIR.
# Debian bookworm, as root: needs deb-src access to deb.debian.org (the script adds it).
#   tools/ns2/build.sh DIR
# then DIR/ns is ns-2.35 (traces byte-identical to /usr/bin/ns), and DIR/key/ns runs a
# script with the List scheduler ordering events by their time rounded to the nanosecond
# (manetlab's clock), e.g.  PATH=DIR/key:$PATH manetlab crosscheck ...
set -eu
out=$(realpath -m "${1:?usage: build.sh DIR}")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/src" && cd "$out/src"

if ! grep -qs deb-src /etc/apt/sources.list.d/debian-src.sources; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
        > /etc/apt/sources.list.d/debian-src.sources
    apt-get update -q
fi
apt-get install -y -q tcl8.6-dev tk8.6-dev tclcl tclcl-dev libotcl1-dev libxt-dev libpcap-dev >/dev/null
# The Debian diff is not served here any more; the upstream tarball is enough.
[ -f ns2_2.35+dfsg.orig.tar.xz ] || apt-get source -q --download-only ns2 || true
[ -d ns-2.35 ] || tar xf ns2_2.35+dfsg.orig.tar.xz

# configure looks for Tcl, Tk, OTcl and TclCL in source-tree layouts: give it one each
r="$out/roots"; rm -rf "$r"; mkdir -p "$r"
mkdir -p "$r/tcl/include" "$r/tcl/lib" "$r/tk/include" "$r/tk/lib" "$r/otcl/include" "$r/otcl/lib" "$r/tclcl/include" "$r/tclcl/lib"
for f in /usr/include/tcl8.6/*.h /usr/include/tcl8.6/tcl-private/generic/*.h /usr/include/tcl8.6/tcl-private/unix/*.h; do ln -sf "$f" "$r/tcl/include/"; done
ln -s /usr/lib/x86_64-linux-gnu/libtcl8.6.so "$r/tcl/lib/"
cp -r /usr/share/tcltk/tcl8.6 "$r/tcl/lib/tcl8.6"
mkdir -p "$r/tcl/lib/tcl8.6/http" && cp "$r/tcl/lib/tcl8.6/http1.0/http.tcl" "$r/tcl/lib/tcl8.6/http/"
for f in /usr/include/tcl8.6/tk*.h /usr/include/tcl8.6/tk-private/generic/*.h /usr/include/tcl8.6/tk-private/unix/*.h; do [ -e "$f" ] && ln -sf "$f" "$r/tk/include/"; done
ln -s /usr/lib/x86_64-linux-gnu/libtk8.6.so "$r/tk/lib/"
cp -r /usr/share/tcltk/tk8.6 "$r/tk/lib/tk8.6"
ln -s /usr/include/otcl.h "$r/otcl/include/"
ln -s /usr/lib/x86_64-linux-gnu/libotcl.so "$r/otcl/lib/"
for f in /usr/include/tclcl/*; do ln -s "$f" "$r/tclcl/include/"; done
ln -s /usr/lib/x86_64-linux-gnu/libtclcl.so "$r/tclcl/lib/"
ln -s /usr/bin/tcl2c++ "$r/tclcl/tcl2c++"

cd ns-2.35
patch -p1 -N -r - < "$here/event-key-order.patch" || grep -q NS_KEY_ORDER common/scheduler.cc
./configure --with-tcl="$r/tcl" --with-tcl-ver=8.6 --with-tk="$r/tk" --with-tk-ver=8.6 \
    --with-otcl="$r/otcl" --with-tclcl="$r/tclcl" > configure.log
# Debian's TclCL has no 64-bit bind(); the one user left is PackMime's maxpkts_
sed -i 's|^#define HAVE_INT64 1|/* #undef HAVE_INT64 */|' autoconf.h
sed -i 's|^\(\s*\)bind("maxpkts_", &maxpkts_);|\1// bind("maxpkts_", \&maxpkts_);|' packmime/packmime_OL.cc
make -j"$(nproc)" CCOPT="-O2 -fpermissive -Wno-narrowing -std=gnu++98 -w -DUSE_INTERP_RESULT -DUSE_INTERP_ERRORLINE" ns > make.log
cp ns "$out/ns"

mkdir -p "$out/key"
cat > "$out/key/ns" <<WRAP
#!/bin/sh
# ns-2.35 with the List scheduler and events ordered by their nanosecond (NS_KEY_ORDER)
s="\$1"; shift
grep -q '^set ns_ \\[new Simulator\\]\$' "\$s" || echo "key/ns: \$s has no 'set ns_ [new Simulator]' line: default scheduler" >&2
sed 's/^set ns_ \\[new Simulator\\]\$/set ns_ [new Simulator]\\n\$ns_ use-scheduler List/' "\$s" > "\$s.key.tcl"
NS_KEY_ORDER=1 exec "$out/ns" "\$s.key.tcl" "\$@"
WRAP
chmod +x "$out/key/ns"
echo "built $out/ns and $out/key/ns"
