/*
 * Exits - a compiled caller calling a tiny compiled method that is not
 * inlined, so a large share of the samples fall in the callee's entry and
 * exit (add $N,%rsp; pop %rbp; the return poll; ret). unwind.bats checks that
 * the HotSpot unwinder gives those samples their caller.
 *
 *   java -XX:CompileCommand=dontinline,flametest.Exits::leaf -cp build/java
 *        flametest.Exits [--exit-after S]
 *
 * Prints "READY" (flushed) after a warm-up of 1.5 s, then loops until exit.
 */
package flametest;

public final class Exits {
	static int sink;

	static int leaf(int x) {
		return (x * 31) ^ (x >>> 7);
	}

	static int caller(int n) {
		int s = 0;
		for (int i = 0; i < n; i++)
			s += leaf(i + s);
		return s;
	}

	public static void main(String[] args) {
		double exitAfter = 120;
		for (int i = 0; i + 1 < args.length; i++)
			if (args[i].equals("--exit-after"))
				exitAfter = Double.parseDouble(args[i + 1]);
		long start = System.nanoTime();
		long end = start + (long) (exitAfter * 1e9);
		boolean ready = false;
		while (System.nanoTime() < end) {
			sink += caller(100_000);
			if (!ready && System.nanoTime() - start > 1_500_000_000L) {
				ready = true;
				System.out.println("READY");
				System.out.flush();
			}
		}
		System.out.println(sink);
	}
}
