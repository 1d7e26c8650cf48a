/*
 * Waits - a JVM whose threads wait in known ways, for the off-CPU and
 * wall-clock profiles (`run --event offcpu|wall`, tests/integration/offcpu.bats):
 *
 *   spin-A   spins in spinA holding the monitor LOCK (always on a CPU)
 *   sleep-B  Thread.sleep in sleepB
 *   lock-C   blocked entering LOCK in lockC (held by spin-A)
 *   read-D   blocked reading a socket on 127.0.0.1 whose peer never writes,
 *            in readD
 *
 *   java -cp build/java flametest.Waits [--exit-after S] [--thread-storm]
 *
 * --periodic: the same four threads, but each wait ends every ~200 ms and
 * starts again (spin-A lets go of the monitor between 200 ms turns,
 * sleep-B sleeps 200 ms at a time, write-E writes a byte to read-D every
 * 200 ms), so that JFR, which records a wait when it ends, sees them.
 *
 * --ping-pong: only two threads handing a token to each other through a
 * SynchronousQueue as fast as they can (a context switch per hand-over,
 * hundreds of thousands a second), printing READY at once (the hostile
 * case of switch rates).
 *
 * --thread-storm: only two threads that create and end threads as fast as
 * they can, each new thread sleeping 50 ms (so thousands exist at once),
 * printing READY at once (the hostile case).
 *
 * Prints "READY" once every thread is in its wait, then "TIDS A B C D"
 * is not printed: the test finds the threads by name (their comm).
 */
package flametest;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

public final class Waits {
	private static final Object LOCK = new Object();
	private static volatile long sink;
	private static volatile boolean aHolds;
	private static boolean periodic;

	private Waits() {}

	static void spinA() {
		if (periodic) {
			for (;;) {
				synchronized (LOCK) {
					aHolds = true;
					long end = System.nanoTime() + 200_000_000L, x = 1;
					while (System.nanoTime() < end)
						x = x * 6364136223846793005L + 1442695040888963407L;
					sink = x;
				}
				Thread.onSpinWait();
			}
		}
		synchronized (LOCK) {
			aHolds = true;
			long x = 1;
			for (;;) {
				x = x * 6364136223846793005L + 1442695040888963407L;
				if ((x & 0xffff) == 0)
					sink = x;
			}
		}
	}

	static void sleepB() throws InterruptedException {
		for (;;)
			Thread.sleep(periodic ? 200 : 60_000);
	}

	static void lockC() {
		do {
			synchronized (LOCK) {
				sink++;
			}
		} while (periodic);
	}

	static int readD(InputStream in) throws java.io.IOException {
		int r;
		do
			r = in.read(); /* the peer never writes (periodic: every 200 ms) */
		while (periodic && r >= 0);
		return r;
	}

	static void pingPong(double exitAfter) throws InterruptedException {
		java.util.concurrent.SynchronousQueue<Integer> ab = new java.util.concurrent.SynchronousQueue<>();
		java.util.concurrent.SynchronousQueue<Integer> ba = new java.util.concurrent.SynchronousQueue<>();
		Thread ping = new Thread(() -> {
			try {
				for (int i = 0;; i++) {
					ab.put(i);
					ba.take();
				}
			} catch (InterruptedException e) {
				/* exit */
			}
		}, "ping");
		Thread pong = new Thread(() -> {
			try {
				for (;;)
					ba.put(ab.take());
			} catch (InterruptedException e) {
				/* exit */
			}
		}, "pong");
		ping.setDaemon(true);
		pong.setDaemon(true);
		ping.start();
		pong.start();
		System.out.println("READY");
		System.out.flush();
		Thread.sleep((long) (exitAfter * 1000));
		System.exit(0);
	}

	static void threadStorm(double exitAfter) throws InterruptedException {
		Runnable nap = () -> {
			try {
				Thread.sleep(50);
			} catch (InterruptedException e) {
				/* exit */
			}
		};
		Runnable spawner = () -> {
			for (;;) {
				try {
					new Thread(nap).start();
				} catch (OutOfMemoryError e) {
					Thread.onSpinWait(); /* the thread limit: go on */
				}
			}
		};
		for (int i = 0; i < 2; i++) {
			Thread t = new Thread(spawner, "storm-" + i);
			t.setDaemon(true);
			t.start();
		}
		System.out.println("READY");
		System.out.flush();
		Thread.sleep((long) (exitAfter * 1000));
		System.exit(0);
	}

	public static void main(String[] args) throws Exception {
		double exitAfter = 120;
		boolean storm = false;
		for (int i = 0; i < args.length; i++)
			if (args[i].equals("--exit-after"))
				exitAfter = Double.parseDouble(args[++i]);
			else if (args[i].equals("--thread-storm"))
				storm = true;
			else if (args[i].equals("--periodic"))
				periodic = true;
			else if (args[i].equals("--ping-pong")) {
				pingPong(exitAfter);
				return;
			}
		if (storm) {
			threadStorm(exitAfter);
			return;
		}
		Thread a = new Thread(Waits::spinA, "spin-A");
		a.setDaemon(true);
		a.start();
		while (!aHolds)
			Thread.onSpinWait();
		Thread b = new Thread(() -> {
			try {
				sleepB();
			} catch (InterruptedException e) {
				/* exit */
			}
		}, "sleep-B");
		b.setDaemon(true);
		b.start();
		Thread c = new Thread(Waits::lockC, "lock-C");
		c.setDaemon(true);
		c.start();
		ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
		Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
		Socket peer = server.accept(); /* kept open, never written to */
		Thread d = new Thread(() -> {
			try {
				readD(client.getInputStream());
			} catch (java.io.IOException e) {
				/* exit */
			}
		}, "read-D");
		d.setDaemon(true);
		d.start();
		if (periodic) {
			java.io.OutputStream out = peer.getOutputStream();
			Thread e = new Thread(() -> {
				try {
					for (;;) {
						Thread.sleep(200);
						out.write(1);
						out.flush();
					}
				} catch (Exception ex) {
					/* exit */
				}
			}, "write-E");
			e.setDaemon(true);
			e.start();
		}
		while (c.getState() != Thread.State.BLOCKED || b.getState() != Thread.State.TIMED_WAITING
		       || d.getState() != Thread.State.RUNNABLE)
			Thread.sleep(10);
		Thread.sleep(200); /* read-D into its read */
		System.out.println("READY");
		System.out.flush();
		long end = System.nanoTime() + (long) (exitAfter * 1e9);
		while (System.nanoTime() < end)
			Thread.sleep(periodic ? 200 : Math.max(1, (end - System.nanoTime()) / 1_000_000));
		peer.close();
		System.exit(0);
	}
}
