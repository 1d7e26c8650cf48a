package oracle;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * A big application for the end-of-window and unwinder benches: code we did
 * not write, lots of it, compiled by the JIT. In one JVM: the JDK's own Java
 * compiler (javac, in-process through javax.tools) compiling packages of the
 * JDK's own sources (Debian's openjdk-17-source) again and again, plus the
 * H2 and Derby SQL engines under SqlLoad. Tens of thousands of JIT symbols.
 *
 * Usage: BigLoad SRC_ZIP OUT_DIR COMPILE_THREADS PACKAGE...
 * PACKAGE: a directory of src.zip, e.g. java.base/java/util (its .java files,
 * not its subdirectories). Needs h2.jar and derby.jar on the class path.
 * Prints READY once the sources are extracted and every thread is started.
 */
public final class BigLoad {
	private BigLoad() {
	}

	public static void main(String[] args) throws Exception {
		Path out = Paths.get(args[1]);
		int threads = Integer.parseInt(args[2]);
		List<String> pkgs = new ArrayList<>();
		for (int i = 3; i < args.length; i++)
			pkgs.add(args[i].endsWith("/") ? args[i] : args[i] + "/");
		Path src = out.resolve("src");
		List<Path> files = extract(args[0], pkgs, src);
		if (files.isEmpty())
			throw new IllegalStateException("no sources of " + pkgs + " in " + args[0]);
		for (int t = 0; t < threads; t++) {
			final int id = t;
			Thread th = new Thread(() -> compileLoop(src, files, out.resolve("classes-" + id)), "javac-" + t);
			th.setDaemon(true);
			th.start();
		}
		sql("jdbc:h2:mem:big;DB_CLOSE_DELAY=-1");
		sql("jdbc:derby:memory:big;create=true");
		System.out.println("READY " + files.size() + " sources");
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}

	private static void sql(String url) {
		Thread t = new Thread(() -> {
			try {
				SqlLoad.main(new String[] {url, "mixed", "1"});
			} catch (Exception e) {
				e.printStackTrace();
			}
		}, "sql-main-" + url.split(":")[1]);
		t.setDaemon(true);
		t.start();
	}

	private static List<Path> extract(String zip, List<String> pkgs, Path dst) throws IOException {
		List<Path> files = new ArrayList<>();
		try (ZipFile z = new ZipFile(zip)) {
			for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements();) {
				ZipEntry en = e.nextElement();
				String n = en.getName();
				if (!n.endsWith(".java") || n.endsWith("module-info.java") || n.endsWith("package-info.java"))
					continue;
				for (String p : pkgs) {
					if (n.startsWith(p) && n.indexOf('/', p.length()) < 0) {
						Path f = dst.resolve(n);
						Files.createDirectories(f.getParent());
						try (InputStream in = z.getInputStream(en)) {
							Files.copy(in, f, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
						}
						files.add(f);
					}
				}
			}
		}
		return files;
	}

	/* Each source's module (the first path element under src) is patched
	 * with the extracted tree, so javac compiles java.base's classes as
	 * java.base's. Errors and warnings are expected and ignored: the work is
	 * the compiler's. */
	private static void compileLoop(Path src, List<Path> files, Path classes) {
		JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
		List<String> opts = new ArrayList<>();
		try (java.util.stream.Stream<Path> mods = Files.list(src)) {
			mods.forEach(m -> {
				opts.add("--patch-module");
				opts.add(m.getFileName() + "=" + m);
			});
			Files.createDirectories(classes);
		} catch (IOException e) {
			throw new RuntimeException(e);
		}
		opts.addAll(List.of("-proc:none", "-nowarn", "-XDignore.symbol.file", "-Xlint:none", "-Xmaxerrs", "1",
				"-d", classes.toString()));
		java.io.Writer sink = java.io.Writer.nullWriter();
		for (;;) {
			try (StandardJavaFileManager fm = javac.getStandardFileManager(d -> {
			}, null, null)) {
				Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromPaths(files);
				javac.getTask(sink, fm, d -> {
				}, opts, null, units).call();
			} catch (Exception e) {
				e.printStackTrace();
			}
		}
	}
}
