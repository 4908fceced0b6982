// Topic administration for produce/kafka.sh (the broker jars hold no kafka-topics tool):
// java -cp 'JARS/*' KafkaAdmin.java BOOTSTRAP (create NAME PARTITIONS | delete NAME | retention NAME MS)...
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;

public class KafkaAdmin {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    try (Admin a = Admin.create(p)) {
      for (int i = 1; i < args.length; ) {
        String op = args[i++];
        String name = args[i++];
        try {
          switch (op) {
            case "create":
              a.createTopics(List.of(new NewTopic(name, Integer.parseInt(args[i++]), (short) 1))).all().get();
              break;
            case "delete":
              a.deleteTopics(List.of(name)).all().get();
              break;
            case "partitions":
              a.createPartitions(Map.of(name, NewPartitions.increaseTo(Integer.parseInt(args[i++])))).all().get();
              break;
            case "retention":
              ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, name);
              a.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(
                  new ConfigEntry("retention.ms", args[i++]), AlterConfigOp.OpType.SET)))).all().get();
              break;
            default:
              throw new IllegalArgumentException(op);
          }
        } catch (Exception e) {
          System.err.println(op + " " + name + ": " + e.getMessage());
        }
      }
    }
  }
}
