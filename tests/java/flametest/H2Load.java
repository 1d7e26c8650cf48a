/*
 * H2Load - a SQL workload on the H2 database engine (Debian's libh2-java,
 * /usr/share/java/h2.jar), in memory: the "real application" of the JIT
 * window benchmark (bench/jit-window.sh). H2's parser, optimizer and
 * executor give the JIT thousands of methods to compile.
 *
 *   java -XX:+PreserveFramePointer -cp build/java:/usr/share/java/h2.jar \
 *        flametest.H2Load [--threads N] [--ops-file PATH]
 *
 * Each thread owns a table and loops: insert a batch, run a join with a
 * GROUP BY, an ORDER BY with LIMIT, an UPDATE and a DELETE. Prints "READY"
 * after 3 s of warm-up. With --ops-file, every 500 ms PATH is replaced with
 * "OPS ELAPSED_MS\n" (loops done so far, ms since the start).
 */
package flametest;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

public final class H2Load {
    static final AtomicLong OPS = new AtomicLong();
    static volatile long sink;

    static void worker(int id) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:load" + id)) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE item(id INT PRIMARY KEY, grp INT, name VARCHAR(40), price DOUBLE)");
                s.execute("CREATE TABLE grp(id INT PRIMARY KEY, label VARCHAR(40))");
                s.execute("INSERT INTO grp SELECT X, 'group-' || X FROM SYSTEM_RANGE(0, 49)");
            }
            PreparedStatement ins = c.prepareStatement("MERGE INTO item VALUES(?, ?, ?, ?)");
            PreparedStatement join = c.prepareStatement(
                "SELECT g.label, COUNT(*), AVG(i.price) FROM item i JOIN grp g ON i.grp = g.id "
                + "WHERE i.price > ? GROUP BY g.label ORDER BY 3 DESC");
            PreparedStatement top = c.prepareStatement(
                "SELECT name, price FROM item WHERE grp = ? ORDER BY price DESC LIMIT 5");
            PreparedStatement upd = c.prepareStatement("UPDATE item SET price = price * 1.01 WHERE grp = ?");
            PreparedStatement del = c.prepareStatement("DELETE FROM item WHERE id % 97 = ?");
            long n = 0;
            for (;;) {
                for (int k = 0; k < 50; k++) {
                    int key = (int) ((n * 50 + k) % 4000);
                    ins.setInt(1, key);
                    ins.setInt(2, key % 50);
                    ins.setString(3, "item-" + key);
                    ins.setDouble(4, (key * 7919) % 1000 / 10.0);
                    ins.addBatch();
                }
                ins.executeBatch();
                long acc = 0;
                join.setDouble(1, (n % 100) / 2.0);
                try (ResultSet r = join.executeQuery()) {
                    while (r.next())
                        acc += r.getLong(2);
                }
                top.setInt(1, (int) (n % 50));
                try (ResultSet r = top.executeQuery()) {
                    while (r.next())
                        acc += r.getString(1).length();
                }
                upd.setInt(1, (int) (n % 50));
                acc += upd.executeUpdate();
                del.setInt(1, (int) (n % 97));
                acc += del.executeUpdate();
                sink += acc;
                n++;
                OPS.incrementAndGet();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = 2;
        String opsFile = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--threads"))
                threads = Integer.parseInt(args[i + 1]);
            else if (args[i].equals("--ops-file"))
                opsFile = args[i + 1];
        }
        Class.forName("org.h2.Driver");
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            final int id = t;
            Thread th = new Thread(() -> {
                try {
                    worker(id);
                } catch (Exception e) {
                    e.printStackTrace();
                    System.exit(1);
                }
            }, "h2-worker-" + t);
            th.setDaemon(true);
            th.start();
        }
        Thread.sleep(3000);
        System.out.println("READY");
        System.out.flush();
        for (;;) {
            Thread.sleep(500);
            if (opsFile == null)
                continue;
            Path p = Paths.get(opsFile), tmp = Paths.get(opsFile + ".tmp");
            long ms = (System.nanoTime() - start) / 1_000_000;
            Files.write(tmp, (OPS.get() + " " + ms + "\n").getBytes(StandardCharsets.US_ASCII));
            Files.move(tmp, p, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
    }
}
