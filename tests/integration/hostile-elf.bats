#!/usr/bin/env bats
# Hostile containers: crafted ELF files (issue 12, item 4). The libraries a
# container maps are parsed in the sidecar's ELF sandbox, never by the root
# process: a crafted library costs at most its own frame names, the run
# completes, other frames keep their names, and the refusal is logged. A
# crafted .eh_frame costs only the unwinding of frames in that file.

load ../lib/containers

setup() {
	fs_test_setup fs-hostile-elf gcc perf python3
}

teardown() {
	fs_cleanup
}

# In $FS_TMP/elf: elfspin, which dlopens libcrafted.so (a 1 MiB symbol name
# and a C++ name that demangles to 2^60 bytes, next to ordinary functions)
# and libhuge.so (an ordinary library made 1.1 GiB by a sparse tail, over
# the sidecar's file size limit), and spins in each, in itself and in libc.
build_workload() {
	local d=$FS_TMP/elf
	mkdir -p "$d"
	python3 - "$d" <<'PY'
import sys
d = sys.argv[1]
def sid(n):
    if n == 0:
        return "S_"
    n -= 1
    digits, s = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""
    while True:
        s = digits[n % 36] + s
        n //= 36
        if n == 0:
            return "S" + s + "_"
bomb = "_Z1f1a1bIS_S_E" + "".join("S0_I%s%sE" % (sid(k), sid(k)) for k in range(2, 62))
with open(d + "/crafted.c", "w") as f:
    f.write("""
void crafted_spin(void) { for (volatile unsigned i = 0; i < 300000; i++) ; }
void bomb_fn(void) __asm__("%s");
__attribute__((noinline)) void bomb_fn(void) { crafted_spin(); }
void long_fn(void) __asm__("%s");
__attribute__((noinline)) void long_fn(void) { crafted_spin(); }
void crafted_entry(void) { bomb_fn(); long_fn(); crafted_spin(); }
""" % (bomb, "L" * (1 << 20)))
PY
	cat >"$d/huge.c" <<'EOF'
void huge_spin(void) { for (volatile unsigned i = 0; i < 600000; i++) ; }
EOF
	cat >"$d/elfspin.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) void main_spin(void) { for (volatile unsigned i = 0; i < 300000; i++) ; }
__attribute__((noinline)) void libc_spin(void) { for (int i = 0; i < 300; i++) getppid(); }
int main(void)
{
	void *c = dlopen("/opt/elf/libcrafted.so", RTLD_NOW), *h = dlopen("/opt/elf/libhuge.so", RTLD_NOW);
	void (*cs)(void) = c ? (void (*)(void))dlsym(c, "crafted_entry") : NULL;
	void (*hs)(void) = h ? (void (*)(void))dlsym(h, "huge_spin") : NULL;
	if (!cs || !hs) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
	printf("ready\n");
	fflush(stdout);
	for (;;) { cs(); hs(); main_spin(); libc_spin(); }
}
EOF
	local cf="-O1 -g0 -fno-omit-frame-pointer"
	gcc $cf -shared -fPIC -o "$d/libcrafted.so" "$d/crafted.c"
	gcc $cf -shared -fPIC -o "$d/libhuge.so" "$d/huge.c"
	truncate -s 1100M "$d/libhuge.so"
	gcc $cf -o "$d/elfspin" "$d/elfspin.c" -ldl
	chmod -R a+rX "$d"
}

@test "hostile ELF: crafted libraries cost their own names; the run completes and names the rest" {
	build_workload
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true --mount "$FS_TMP/elf:/opt/elf" -- /opt/elf/elfspin
	fs_runc_run "$NAME" "$FS_TMP/b"
	fs_wait_for 20 grep -q ready "$FS_TMP/b/out.log" || { cat "$FS_TMP/b/out.log"; false; }
	local pid
	pid=$(fs_container_pid "$NAME")

	# The oracle for libc frames: the addresses perf samples in libc, named
	# by binutils' nm from the library's dynamic symbols (any alias).
	perf record -q -e cpu-clock -F 499 -g -p "$pid" -o "$FS_TMP/perf.data" -- sleep 2 >/dev/null 2>&1
	perf script -i "$FS_TMP/perf.data" -F ip,dso 2>/dev/null >"$FS_TMP/perf.txt"
	local libc
	libc=$(awk '/libc\.so\.6/ {gsub(/[()]/, "", $2); print $2; exit}' "$FS_TMP/perf.txt")
	[ -n "$libc" ]
	nm -D --defined-only -S "$libc" >"$FS_TMP/nm.txt"
	# With the distribution's debug file (libc6-dbg), run names libc by its
	# full symbol table (docs/debuginfo.md): its names are aliases too.
	local bid dbg
	bid=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
	dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
	[ -z "$bid" ] || [ ! -f "$dbg" ] || nm --defined-only -S "$dbg" >>"$FS_TMP/nm.txt"

	run "$FS_SIDECAR" run "$NAME" -d 3s -F 199 -o "$FS_TMP/e.svg"
	echo "$output" | grep -v "^ *[0-9.]*%"
	[ "$status" -eq 0 ]
	[ -s "$FS_TMP/e.folded" ]
	# The refusals are logged, with the file and the reason.
	echo "$output" | grep -E "symbols for|mangled" | sed "s/^/# /" >&3
	[[ "$output" == *"no symbols for [libhuge.so]"*"over the 1024 MiB limit"* ]]
	# The bomb's own name stays mangled: its demangling was killed.
	[[ "$output" == *"C++ name left mangled (_Z1f1a1bIS_S_E"*"did not answer within 250 ms"* ]]
	# The crafted files cost their own names only.
	grep -q '\[libhuge.so\]' "$FS_TMP/e.folded"
	! grep -q 'huge_spin' "$FS_TMP/e.folded" || false
	grep -q 'crafted_entry;crafted_spin' "$FS_TMP/e.folded"
	# The 1 MiB name is cut, not carried whole into the profile.
	[ "$(awk '{print length($0)}' "$FS_TMP/e.folded" | sort -n | tail -1)" -lt 65536 ]
	# The rest is named: the program and libc, as perf names them.
	grep -q 'main;main_spin' "$FS_TMP/e.folded"
	python3 - "$FS_TMP/perf.txt" "$FS_TMP/nm.txt" "$FS_TMP/e.folded" <<'PY' >&3
import sys, collections
syms = []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 4 and f[2] in "TtWi":
        syms.append((int(f[0], 16), int(f[1], 16), f[3].split("@")[0]))
hits = collections.Counter()
for line in open(sys.argv[1]):  # each sample's frames; libc ones are file addresses
    f = line.split()
    if len(f) == 2 and "libc.so.6" in f[1]:
        hits[int(f[0], 16)] += 1
ours = collections.Counter()
for line in open(sys.argv[3]):
    stack, n = line.rsplit(" ", 1)
    for fr in stack.split(";"):
        ours[fr] += int(n)
named = 0
for ip, n in hits.most_common(5):
    aliases = {name for start, size, name in syms if start <= ip < start + max(size, 1)}
    both = aliases & set(ours)
    print("# libc %#x (%d perf samples): nm %s, run %s" % (ip, n, sorted(aliases), sorted(both)))
    named += bool(both)
sys.exit(0 if named >= 1 and hits else 1)
PY
	# The bomb is there under its mangled name, not demangled (that
	# would start "f(a, b<a, a>"), and its callee is named.
	grep -q '_Z1f1a1bIS_S_E[^;]*;crafted_spin' "$FS_TMP/e.folded"
	! grep -q 'b<a, a>' "$FS_TMP/e.folded" || false
}

# libcfibomb.so: preloaded into a JVM, its constructor starts a thread that
# spins in the library (built without frame pointers, so only its CFI could
# unwind it); then its .eh_frame_hdr is made to claim 2^32-1 FDEs and every
# FDE's CIE pointer to point at the FDE itself.
build_cfibomb() {
	local d=$FS_TMP/elf
	mkdir -p "$d"
	cat >"$d/cfibomb.c" <<'EOF2'
#include <pthread.h>
__attribute__((noinline)) void cfibomb_spin(void) { for (volatile unsigned i = 0; i < 300000; i++) ; }
__attribute__((noinline)) void *cfibomb_outer(void *a) { for (;;) cfibomb_spin(); return a; }
__attribute__((constructor)) static void cfibomb_start(void)
{
	pthread_t t;
	pthread_create(&t, 0, cfibomb_outer, 0);
}
EOF2
	gcc -O1 -g0 -fomit-frame-pointer -fasynchronous-unwind-tables -shared -fPIC -pthread \
		-o "$d/libcfibomb.so" "$d/cfibomb.c"
	python3 - "$d/libcfibomb.so" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
phoff, = struct.unpack_from("<Q", b, 0x20)
phnum, = struct.unpack_from("<H", b, 0x38)
loads, ehf = [], None
for i in range(phnum):
    t, _, off, va, _, fsz = struct.unpack_from("<IIQQQQ", b, phoff + 56 * i)
    if t == 1:
        loads.append((off, va, fsz))
    if t == 0x6474e550:
        ehf = (off, va)
def off_of(va):
    return next(o + va - v for o, v, s in loads if v <= va < v + s)
off, va = ehf
rel, = struct.unpack_from("<i", b, off + 4)
at = off_of(va + 4 + rel)
struct.pack_into("<I", b, off + 8, 0xFFFFFFFF)
while at + 8 <= len(b):
    n, cid = struct.unpack_from("<II", b, at)
    if n in (0, 0xFFFFFFFF):
        break
    if cid:
        struct.pack_into("<I", b, at + 4, 4)
    at += 4 + n
open(p, "wb").write(b)
PY
	chmod -R a+rX "$d"
}

@test "hostile ELF: a crafted .eh_frame in a JVM costs that file's unwinding only" {
	local java=${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
	[ -x "$java" ] || skip "no JDK at $java"
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "Java workloads not built (make agent)"
	build_cfibomb
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true \
		--mount "$FS_TMP/elf:/opt/elf" --mount "$FS_BUILD/java:/opt/fsjava" -- \
		/usr/bin/env LD_PRELOAD=/opt/elf/libcfibomb.so "$java" -XX:-PreserveFramePointer \
		-cp /opt/fsjava flametest.Workload --threads 2 --warmup 1
	fs_runc_run "$NAME" "$FS_TMP/b"
	fs_wait_for 90 grep -q READY "$FS_TMP/b/out.log" || { cat "$FS_TMP/b/out.log"; false; }
	fs_wait_for 10 test -f "$FS_RUN/containers/$NAME.json"
	local pid
	pid=$(fs_container_pid "$NAME")
	grep -q libcfibomb.so "/proc/$pid/maps"

	run timeout 60 "$FS_SIDECAR" run "$NAME" -d 4s -F 199 -o "$FS_TMP/e.svg"
	echo "$output" | grep -v "^ *[0-9.]*%"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(without frame pointers): hotspot"* ]]
	# The crafted library's thread is sampled and named; its CFI was
	# refused, so its stacks stop in the library (no frame pointers).
	grep -q 'cfibomb_spin' "$FS_TMP/e.folded"
	grep 'cfibomb' "$FS_TMP/e.folded" | sort -k2 -n -r | head -3 | sed 's/^/# /' >&3
	[ -z "$(grep 'cfibomb_outer;cfibomb_spin' "$FS_TMP/e.folded")" ]
	# Java stacks still reach their thread's base (as in unwind.bats).
	local pct total
	read -r pct total < <(awk '{
		n = $NF
		if ($0 !~ /;(flametest|java|jdk|sun)\.[A-Za-z0-9_$.]*/) next
		j += n
		if ($0 ~ /^java;(\[[^]]*\];)?(start_thread|thread_native_entry|JavaMain|__clone3|clone3|clone|_start)(;|$)/ ||
		    $0 ~ /;(thread_native_entry|JavaMain);/) w += n
	} END { printf "%d %d\n", (j ? 100 * w / j : 0), j }' "$FS_TMP/e.folded")
	echo "# crafted .eh_frame: $pct% of $total Java samples reach the thread's base" >&3
	[ "$total" -gt 100 ]
	[ "$pct" -ge 90 ]
}
