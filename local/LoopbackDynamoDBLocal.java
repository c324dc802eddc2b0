import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local bound to 127.0.0.1 only. Its own command line has no bind-address option and its
 * Jetty server listens on every interface, so this builds the server exactly as DynamoDB Local's
 * main does (same arguments), then sets the loopback host on the Jetty connector before starting.
 * Run from source (`java -cp DynamoDBLocal.jar LoopbackDynamoDBLocal.java -port ...`), so the
 * repo holds no compiled class; local/emulators.ts starts it.
 */
public class LoopbackDynamoDBLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    Connector[] connectors = jetty.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost("127.0.0.1");
    // safeStart (unlike start) lets a bind failure end the process instead of only printing it.
    proxy.safeStart();
    proxy.join();
  }
}
