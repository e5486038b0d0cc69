import com.google.gson.Gson;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.plantstore.client.ApiClient;
import org.plantstore.client.ApiException;
import org.plantstore.client.ApiResponse;
import org.plantstore.client.api.OperationsApi;
import org.plantstore.client.api.PlantsApi;
import org.plantstore.client.model.NewPlant;
import org.plantstore.client.model.Plant;

/**
 * A consumer of the generated Java client (sdk/java) against a live service. Reads
 * PLANT_STORE_URL and PLANT_STORE_TOKEN, sends the round trip that every SDK's consumer sends
 * (test/sdk/round-trips.ts says what each answer must be) and prints what it saw as one JSON
 * object.
 */
public class RoundTrip {
  public static void main(String[] args) throws Exception {
    ApiClient authorised = client();
    authorised.setBearerToken(System.getenv("PLANT_STORE_TOKEN"));
    ApiClient anonymous = client();
    PlantsApi plants = new PlantsApi(authorised);

    Map<String, Object> seen = new LinkedHashMap<>();
    seen.put("create", create(plants, 10L, "Monstera", "aroid"));
    seen.put("replay", create(plants, 10L, "Monstera", "aroid"));
    seen.put("conflict", create(plants, 10L, "Fern", null));
    seen.put("missingToken", create(new PlantsApi(anonymous), 11L, "Fern", null));
    seen.put("largestId", create(plants, Long.MAX_VALUE, "Largest", null));
    seen.put("smallestId", create(plants, Long.MIN_VALUE, "Smallest", null));
    seen.put("beyondDoubles", create(plants, (1L << 53) + 1, "Aloe", null));
    seen.put("health", new OperationsApi(anonymous).getHealth().getStatus().getValue());
    System.out.println(new Gson().toJson(seen));
  }

  private static ApiClient client() {
    return new ApiClient().setBasePath(System.getenv("PLANT_STORE_URL"));
  }

  private static Map<String, Object> create(PlantsApi api, long id, String name, String tag) throws IOException {
    Map<String, Object> seen = new LinkedHashMap<>();
    try {
      ApiResponse<Plant> answer = api.createPlantWithHttpInfo(new NewPlant().id(id).name(name).tag(tag));
      seen.put("status", answer.getStatusCode());
      seen.put("plant", answer.getData());
    } catch (ApiException failure) {
      // The client leaves an error's body unread; the spec's Error model reads it.
      seen.put("status", failure.getCode());
      seen.put("error", org.plantstore.client.model.Error.fromJson(failure.getResponseBody()));
    }
    return seen;
  }
}
