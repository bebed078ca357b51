package graphmem.launcher;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

/**
 * Runs a real Neo4j 5.26 Community DBMS in this JVM: Bolt, HTTP API and Neo4j Browser.
 *
 * <p>Why DatabaseManagementServiceBuilder (the public embedded API) is enough: in 5.26 its
 * DatabaseManagementServiceFactory starts the Jetty web server (org.neo4j.app:neo4j-server, a
 * transitive dependency of org.neo4j:neo4j) whenever the HTTP connector is enabled. The Browser
 * module serves the /browser/ assets that the neo4j-browser jar puts on the classpath.
 *
 * <p>Usage: java -Xmx2g -jar target/neo4j-launcher.jar --home DIR [--bolt-port 7687]
 * [--http-port 7474] [--pagecache 512m] [--skip-selfcheck]. DIR is the Neo4j home: data/ and
 * logs/ are created inside it.
 */
public final class Neo4jLauncher {
    // Throwaway names used by the start-up self check; removed again afterwards.
    private static final String LABEL = "_GraphmemSelfCheck";
    private static final String VEC_INDEX = "_graphmem_selfcheck_vec";
    private static final String FT_INDEX = "_graphmem_selfcheck_ft";

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = parseArgs(args);
        Path home = Path.of(opt.getOrDefault("home", "neo4j-home")).toAbsolutePath();
        int boltPort = Integer.parseInt(opt.getOrDefault("bolt-port", "7687"));
        int httpPort = Integer.parseInt(opt.getOrDefault("http-port", "7474"));
        long pageCache = ByteUnit.parse(opt.getOrDefault("pagecache", "512m"));

        DatabaseManagementService dbms;
        try {
            dbms = new DatabaseManagementServiceBuilder(home)
                    // Loopback only, no auth: this is a local dev/test server.
                    .setConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress("127.0.0.1"))
                    .setConfig(GraphDatabaseSettings.default_advertised_address, new SocketAddress("127.0.0.1"))
                    .setConfig(GraphDatabaseSettings.auth_enabled, false)
                    .setConfig(BoltConnector.enabled, true)
                    .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", boltPort))
                    .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", boltPort))
                    // Embedded mode defaults the HTTP connector to off; turning it on starts Jetty.
                    .setConfig(HttpConnector.enabled, true)
                    .setConfig(HttpConnector.listen_address, new SocketAddress("127.0.0.1", httpPort))
                    .setConfig(HttpConnector.advertised_address, new SocketAddress("127.0.0.1", httpPort))
                    // Modest footprint for a 2-core test box; heap is set by the caller (-Xmx).
                    .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                    .setConfig(GraphDatabaseSettings.keep_logical_logs, "2 files")
                    // Bolt waits ~2x5s for idle Netty pools on shutdown; 1s keeps test teardown quick.
                    .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1))
                    .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1))
                    // No phoning home (the box has no network anyway; avoids retries/noise).
                    .setConfig(GraphDatabaseSettings.udc_enabled, false)
                    // Server-style INFO lines ("Started.", "Bolt enabled on ...") go to stdout -> log file.
                    .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO))
                    .build();
        } catch (Throwable t) {
            System.out.println("GRAPHMEM_NEO4J_FAILED " + t);
            t.printStackTrace();
            System.exit(1);
            return;
        }

        // SIGTERM/SIGINT run shutdown hooks: close the stores cleanly (checkpoint, release locks).
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                dbms.shutdown();
                System.out.println("GRAPHMEM_NEO4J_STOPPED");
            } finally {
                stopped.countDown();
            }
        }, "graphmem-neo4j-shutdown"));

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(TimeUnit.MINUTES.toMillis(5))) {
            System.out.println("GRAPHMEM_NEO4J_FAILED database 'neo4j' did not become available");
            System.exit(2);
        }
        if (!opt.containsKey("skip-selfcheck")) {
            try {
                selfCheck(db);
            } catch (Throwable t) {
                System.out.println("GRAPHMEM_NEO4J_FAILED self check: " + t);
                t.printStackTrace();
                System.exit(3);
            }
        }
        // Bolt and HTTP are bound by build(); the DB is online, so clients can connect now.
        System.out.println("GRAPHMEM_NEO4J_READY bolt=bolt://127.0.0.1:" + boltPort
                + " http=http://127.0.0.1:" + httpPort);
        System.out.flush();
        stopped.await(); // keep main alive until a signal triggers the shutdown hook
    }

    /** Fail fast if graphmem's required features are missing: vector + fulltext indexes, dynamic types. */
    private static void selfCheck(GraphDatabaseService db) {
        long t0 = System.nanoTime();
        db.executeTransactionally("CREATE VECTOR INDEX " + VEC_INDEX + " IF NOT EXISTS FOR (n:" + LABEL
                + ") ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: 3,"
                + " `vector.similarity_function`: 'cosine'}}");
        db.executeTransactionally("CREATE FULLTEXT INDEX " + FT_INDEX + " IF NOT EXISTS FOR (n:" + LABEL
                + ") ON EACH [n.text]");
        db.executeTransactionally("CALL db.awaitIndexes(120)");
        try {
            // Cypher 5.26 dynamic relationship type.
            String type = db.executeTransactionally(
                    "CREATE (a:" + LABEL + " {embedding: [1.0, 0.0, 0.0], text: 'graphmem alpha'})"
                            + "-[r:$($t)]->(b:" + LABEL + " {embedding: [0.0, 1.0, 0.0], text: 'beta'})"
                            + " RETURN type(r) AS t",
                    Map.of("t", "GRAPHMEM SELF CHECK"), r -> (String) r.next().get("t"));
            check("GRAPHMEM SELF CHECK".equals(type), "dynamic relationship type, got " + type);
            String nearest = db.executeTransactionally(
                    "CALL db.index.vector.queryNodes($i, 1, [0.9, 0.1, 0.0]) YIELD node RETURN node.text AS t",
                    Map.of("i", VEC_INDEX), r -> r.hasNext() ? (String) r.next().get("t") : null);
            check("graphmem alpha".equals(nearest), "vector query, got " + nearest);
            long hits = db.executeTransactionally(
                    "CALL db.index.fulltext.queryNodes($i, 'alpha') YIELD node RETURN count(node) AS c",
                    Map.of("i", FT_INDEX), r -> (Long) r.next().get("c"));
            check(hits == 1, "fulltext query, got " + hits + " hits");
        } finally {
            db.executeTransactionally("MATCH (n:" + LABEL + ") DETACH DELETE n");
            db.executeTransactionally("DROP INDEX " + VEC_INDEX + " IF EXISTS");
            db.executeTransactionally("DROP INDEX " + FT_INDEX + " IF EXISTS");
        }
        System.out.println("GRAPHMEM_NEO4J_SELFCHECK ok (vector index, fulltext index, dynamic types) in "
                + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }

    private static void check(boolean ok, String what) {
        if (!ok) throw new IllegalStateException("self check failed: " + what);
    }

    /** "--key value" pairs; a flag without a value maps to "true". */
    private static Map<String, String> parseArgs(String[] args) {
        Map<String, String> out = new java.util.HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) throw new IllegalArgumentException("unexpected argument: " + args[i]);
            String key = args[i].substring(2);
            boolean hasValue = i + 1 < args.length && !args[i + 1].startsWith("--");
            out.put(key, hasValue ? args[++i] : "true");
        }
        return out;
    }
}
