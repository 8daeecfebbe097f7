#!/bin/sh
# make_env_root.sh ROOT [--cc] — a minimal root tree for task-environment
# tests: /bin/sh (dash), the host's Python 3 with its standard library and
# pytest, and a package the host does not have (rlvr_env_marker, version
# 7.3.1), so a test that imports it passes only inside the environment.
# --cc adds tcc with the C library's headers and start files (a C compiler
# as `cc`), bash and the everyday tools a test script calls (cat, sed, awk,
# head, tr, mkdir, rm, cmp, ls, cp, grep). Debian's merged /usr layout: /bin, /lib and /lib64 are links
# into /usr.
set -eu
root=$1
cc=${2:-}
py=$(readlink -f /usr/bin/python3)
ver=$(basename "$py")
rm -rf "$root"
mkdir -p "$root/usr/bin" "$root/usr/lib/x86_64-linux-gnu" "$root/usr/lib64" "$root/usr/lib/python3/dist-packages" \
         "$root/etc" "$root/testbed"
ln -s usr/bin "$root/bin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
cp /bin/dash "$root/usr/bin/dash"
ln -s dash "$root/usr/bin/sh"
cp "$py" "$root/usr/bin/$ver"
ln -s "$ver" "$root/usr/bin/python3"
# the shared libraries both programs load, where the loader looks for them
for lib in $(ldd "$py" /bin/dash | awk '/=>/ {print $3} /^\t\// {print $1}' | sort -u); do
    case "$lib" in
    */ld-linux*) cp -L "$lib" "$root/usr/lib64/" ;;
    *) cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/" ;;
    esac
done
# the standard library without its tests, GUI and byte code
tar -C /usr/lib --exclude="$ver/test" --exclude="$ver/idlelib" --exclude="$ver/tkinter" \
    --exclude="$ver/turtledemo" --exclude="$ver/ensurepip" --exclude="$ver/lib2to3" --exclude="$ver/pydoc_data" \
    --exclude="$ver/config-*" --exclude='__pycache__' -cf - "$ver" | tar -C "$root/usr/lib" -xf -
for pkg in _pytest pytest pluggy iniconfig packaging py.py attr attrs exceptiongroup tomli; do
    if [ -e "/usr/lib/python3/dist-packages/$pkg" ]; then
        tar -C /usr/lib/python3/dist-packages --exclude='__pycache__' -cf - "$pkg" |
            tar -C "$root/usr/lib/python3/dist-packages" -xf -
    fi
done
mkdir -p "$root/usr/lib/python3/dist-packages/rlvr_env_marker"
printf 'VERSION = "7.3.1"\n' > "$root/usr/lib/python3/dist-packages/rlvr_env_marker/__init__.py"
printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000::/tmp:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nsandbox:x:1000:\n' > "$root/etc/group"
if [ "$cc" = "--cc" ]; then
    # tcc, its runtime, and the files of the C library's development packages
    for pkg in tcc libc6-dev linux-libc-dev; do dpkg -L "$pkg"; done | while read -r f; do
        [ -f "$f" ] || [ -L "$f" ] && printf '%s\n' "usr${f#/usr}"
    done | sort -u >"$root/.files"
    tar -C / -cf - -T "$root/.files" 2>/dev/null | tar -C "$root" -xf -
    rm -f "$root/.files"
    for lib in $(ldd /usr/bin/tcc | awk '/=>/ {print $3}'); do cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/"; done
    # libc.so.6 names the loader, which tcc looks for on its library path
    cp -L /lib64/ld-linux-x86-64.so.2 "$root/usr/lib/x86_64-linux-gnu/"
    ln -sf tcc "$root/usr/bin/cc"
    for tool in bash cat sed mawk head tr mkdir rm cmp ls cp grep; do
        cp -L "/usr/bin/$tool" "$root/usr/bin/$tool"
        for lib in $(ldd "/usr/bin/$tool" | awk '/=>/ {print $3}'); do
            cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/"
        done
    done
    ln -sf mawk "$root/usr/bin/awk"
fi
chmod -R a+rX "$root"
