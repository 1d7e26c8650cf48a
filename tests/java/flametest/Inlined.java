/*
 * Inlined - nearly all of the CPU time in one small method, work(), inlined
 * two levels deep (work into task into step). Without
 * -XX:+DebugNonSafepoints HotSpot names a pc in work's loop by the nearest
 * safepoint's scope (step's); with it, by work itself. nonsafepoints.bats
 * checks that `flamesidecar run` puts the self time on work.
 *
 *   java -cp build/java flametest.Inlined [--threads N] [--virtual [--executor]]
 *        [--go FILE] [--exit-after S]
 *
 * --go FILE: until FILE exists, the threads run a prelude (the same shape
 * under other names: pwork into ptask into pstep), compiled before anything
 * could change the JVM's flags; then they stop and new threads run the hot
 * methods, compiled from then on. --virtual (JDK 21+, found by reflection
 * so that this source builds with --release 11): the threads are virtual.
 * --executor (with --virtual): the hot work runs as short tasks (Callables,
 * 20 step() calls each) submitted to a virtual-thread-per-task executor, N
 * at a time, so the hot code runs under FutureTask.run.
 * Prints "PRELUDE" when the prelude runs (with --go), and "READY" (flushed)
 * 2 s after the hot threads started.
 */
package flametest;

import java.io.File;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

public final class Inlined {
	static volatile long sink;
	static volatile boolean preludeOn = true;

	/* the hot method: small, a short loop of arithmetic */
	static long work(long x) {
		for (int i = 0; i < 96; i++)
			x = (x ^ (x >>> 31)) * 0x9E3779B97F4A7C15L + i;
		return x;
	}

	static long task(long x) {
		return work(x) + 1;
	}

	static long step(long seed) {
		long a = 0;
		for (int i = 0; i < 4096; i++)
			a += task(seed + i);
		return a;
	}

	static long pwork(long x) {
		for (int i = 0; i < 96; i++)
			x = (x ^ (x >>> 29)) * 0xC2B2AE3D27D4EB4FL + i;
		return x;
	}

	static long ptask(long x) {
		return pwork(x) + 3;
	}

	static long pstep(long seed) {
		long a = 0;
		for (int i = 0; i < 4096; i++)
			a += ptask(seed + i);
		return a;
	}

	static final class Hot implements Runnable {
		public void run() {
			long s = 0;
			for (long seed = 0;; seed += 4096)
				s += step(seed);
		}
	}

	static final class Prelude implements Runnable {
		public void run() {
			long s = 0;
			for (long seed = 0; preludeOn; seed += 4096)
				s += pstep(seed);
			sink = s;
		}
	}

	/* one short task: 20 step() calls */
	static final class Chunk implements Callable<Long> {
		final long seed;

		Chunk(long seed) {
			this.seed = seed;
		}

		public Long call() {
			long s = 0;
			for (int k = 0; k < 20; k++)
				s += step(seed + 4096L * k);
			return s;
		}
	}

	/* N tasks at a time on a virtual-thread-per-task executor, forever */
	static final class Submitter implements Runnable {
		final int n;

		Submitter(int n) {
			this.n = n;
		}

		public void run() {
			try {
				ExecutorService ex = (ExecutorService) Class.forName("java.util.concurrent.Executors")
				    .getMethod("newVirtualThreadPerTaskExecutor")
				    .invoke(null);
				long s = 0;
				for (long seed = 0;; seed += 1 << 20) {
					List<Future<Long>> fs = new ArrayList<>();
					for (int i = 0; i < n; i++)
						fs.add(ex.submit(new Chunk(seed + i)));
					for (Future<Long> f : fs)
						s += f.get();
					sink = s;
				}
			} catch (Exception e) {
				throw new RuntimeException(e);
			}
		}
	}

	static Thread start(Runnable r, boolean virtual, String name) throws Exception {
		if (!virtual) {
			Thread t = new Thread(r, name);
			t.setDaemon(true);
			t.start();
			return t;
		}
		Method of = Thread.class.getMethod("ofVirtual");
		Object builder = of.invoke(null);
		/* through the public interface: the builder's class is not exported */
		Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
		return (Thread) start.invoke(builder, r);
	}

	public static void main(String[] args) throws Exception {
		int threads = 1;
		boolean virtual = false, executor = false;
		String go = null;
		double exitAfter = 120;
		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("--virtual"))
				virtual = true;
			else if (args[i].equals("--executor"))
				executor = true;
			else if (i + 1 < args.length && args[i].equals("--threads"))
				threads = Integer.parseInt(args[++i]);
			else if (i + 1 < args.length && args[i].equals("--go"))
				go = args[++i];
			else if (i + 1 < args.length && args[i].equals("--exit-after"))
				exitAfter = Double.parseDouble(args[++i]);
		}
		long end = System.nanoTime() + (long) (exitAfter * 1e9);
		if (go != null) {
			Thread[] pre = new Thread[threads];
			for (int i = 0; i < threads; i++)
				pre[i] = start(new Prelude(), virtual, "prelude-" + i);
			System.out.println("PRELUDE");
			System.out.flush();
			File f = new File(go);
			while (!f.exists() && System.nanoTime() < end)
				Thread.sleep(10);
			preludeOn = false;
			for (Thread t : pre)
				t.join();
		}
		if (executor)
			start(new Submitter(threads), false, "submitter");
		else
			for (int i = 0; i < threads; i++)
				start(new Hot(), virtual, "hot-" + i);
		Thread.sleep(2000);
		System.out.println("READY");
		System.out.flush();
		long left = end - System.nanoTime();
		if (left > 0)
			Thread.sleep(left / 1000000);
		System.exit(0);
	}
}
