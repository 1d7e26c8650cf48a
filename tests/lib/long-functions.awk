# long-functions.awk - list C functions longer than MAX lines (default 80),
# from the line that names them to their closing brace, as
# "<lines> <file>:<line> <name>". House style: a function reads top-down
# in one screen (docs/testing.md "Function length").
#
#   awk -f tests/lib/long-functions.awk [-v MAX=80] FILE.c...
#
# A function is a line at column 0 that holds "NAME(" and whose body opens
# with "{" alone at column 0 (clang-format's style here), up to "}" alone
# at column 0.
BEGIN { if (!MAX) MAX = 80 }
FNR == 1 { sig = 0; inbody = 0 }
!inbody && /^[A-Za-z_].*[A-Za-z_0-9]\(/ && !/;[[:space:]]*$/ {
	sig = FNR
	name = $0
	sub(/\(.*/, "", name)
	sub(/.*[^A-Za-z_0-9]/, "", name)
	next
}
!inbody && /^\{$/ && sig { inbody = 1; next }
inbody && /^\}/ {
	n = FNR - sig + 1
	if (n > MAX)
		printf "%d %s:%d %s\n", n, FILENAME, sig, name
	inbody = 0
	sig = 0
}
