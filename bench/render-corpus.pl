#!/usr/bin/perl
# bench/render-corpus.pl STACKS SEED - the seeded folded corpus of the render
# and export benchmarks: Java-like stacks, a random walk over a fixed call
# graph of 4,000 methods (75% plain, 10% _[i] inlined, 10% C++, 5% _[k]
# kernel), depth 6-30, STACKS unique stacks, sorted.
use strict;
use warnings;
my ($n, $seed) = @ARGV;
srand($seed);
my @pkg = map { "com/example/" . (qw(api core data io net svc util web))[$_ % 8] . "$_" } 0 .. 39;
my @names;
for my $i (0 .. 3999) {
	my $p = $pkg[int(rand(@pkg))];
	my $kind = rand();
	push @names, $kind < 0.75 ? sprintf("%s/Class%d.method%d", $p, int(rand(300)), int(rand(40)))
		: $kind < 0.85 ? sprintf("%s/Class%d.inl%d_[i]", $p, int(rand(300)), int(rand(40)))
		: $kind < 0.95 ? sprintf("Native%d::call%d", int(rand(200)), int(rand(20)))
		: sprintf("sys_func%d_[k]", int(rand(100)));
}
# each method calls 2-6 others
my @callees = map { [ map { int(rand(4000)) } 1 .. 2 + int(rand(5)) ] } 0 .. 3999;
my @roots = map { int(rand(4000)) } 1 .. 12;
my %seen;
while (keys %seen < $n) {
	my $f = $roots[int(rand(@roots))];
	my @s = ("java/lang/Thread.run", $names[$f]);
	my $depth = 6 + int(rand(25));
	for (3 .. $depth) {
		my $c = $callees[$f];
		$f = $c->[int(rand(@$c))];
		push @s, $names[$f];
	}
	my $k = join(";", @s);
	$seen{$k} = 1 + int(1000 / (1 + rand(999)));
}
print "$_ $seen{$_}\n" for sort keys %seen;
