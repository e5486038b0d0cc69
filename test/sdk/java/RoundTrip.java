import com.google.gson.Gson;
import com.standardwebhooks.Webhook;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.plantstore.client.ApiClient;
import org.plantstore.client.ApiException;
import org.plantstore.client.ApiResponse;
import org.plantstore.client.api.OperationsApi;
import org.plantstore.client.api.PlantsApi;
import org.plantstore.client.api.WebhooksApi;
import org.plantstore.client.model.CreatedWebhookEndpoint;
import org.plantstore.client.model.NewPlant;
import org.plantstore.client.model.NewPlantEvent;
import org.plantstore.client.model.NewWebhookEndpoint;
import org.plantstore.client.model.WebhookEndpoint;
import org.plantstore.client.model.Plant;
import org.plantstore.client.model.StoredPlant;

/**
 * A consumer of the generated Java client (sdk/java) against a live service. Reads
 * PLANT_STORE_URL, PLANT_STORE_TOKEN and PLANT_STORE_READ_TOKEN (a token that may only read),
 * sends the round trip that every SDK's consumer sends (test/sdk/round-trips.ts says what each
 * answer must be) and prints what it saw as one JSON object. Last, it registers a webhook endpoint
 * (a receiver of its own on 127.0.0.1) and verifies what it receives with the Standard Webhooks
 * library from Maven Central.
 */
public class RoundTrip {
  private static final Pattern NEXT_PAGE = Pattern.compile("<([^>]*)>; rel=\"next\"");

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
    Map<String, Object> firstPage = page(plants.listPlantsWithHttpInfo(1, null));
    seen.put("firstPage", firstPage);
    seen.put("secondPage", nextPage(plants, (String) firstPage.get("next")));
    seen.put("updated", update(plants, 10L, "Monstera", "climber", null));
    seen.put("staleUpdate", update(plants, 10L, "Monstera", null, "\"stale\""));
    seen.put("updateMissing", update(plants, 11L, "Fern", null, null));
    seen.put("deleted", delete(plants, 10L));
    seen.put("deletedAgain", delete(plants, 10L));
    ApiClient reader = client();
    reader.setBearerToken(System.getenv("PLANT_STORE_READ_TOKEN"));
    seen.put("forbidden", create(new PlantsApi(reader), 12L, "Fern", null));
    seen.put("webhook", webhook(authorised));
    System.out.println(new Gson().toJson(seen));
  }

  // Registers a receiver for newPlant, creates a plant, and verifies the delivery it gets.
  private static Map<String, Object> webhook(ApiClient authorised) throws Exception {
    CompletableFuture<Map.Entry<Map<String, List<String>>, String>> delivery = new CompletableFuture<>();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/hook", (exchange) -> {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Map<String, List<String>> headers = new LinkedHashMap<>();
      exchange.getRequestHeaders().forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values));
      exchange.sendResponseHeaders(204, -1);
      exchange.close();
      delivery.complete(Map.entry(headers, body));
    });
    server.start();
    WebhooksApi webhooks = new WebhooksApi(authorised);
    ApiResponse<CreatedWebhookEndpoint> registered = webhooks.createWebhookEndpointWithHttpInfo(new NewWebhookEndpoint()
        .url(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/hook")).events(Set.of(NewWebhookEndpoint.EventsEnum.NEW_PLANT)));
    new PlantsApi(authorised).createPlant(new NewPlant().id(20L).name("Webhook fern"));
    Map.Entry<Map<String, List<String>>, String> received = delivery.get(15, TimeUnit.SECONDS);
    // Throws unless the signature is the endpoint secret's.
    new Webhook(registered.getData().getSecret()).verify(received.getValue(), received.getKey());
    NewPlantEvent event = NewPlantEvent.fromJson(received.getValue());
    Map<String, Object> seen = new LinkedHashMap<>();
    seen.put("registered", registered.getStatusCode());
    seen.put("listed", webhooks.listWebhookEndpoints().stream().map((endpoint) -> endpoint.getState().getValue()).toList());
    seen.put("type", String.valueOf(event.getType()));
    seen.put("plant", event.getData().getName());
    seen.put("sameAsModel", event.getData().getName());
    seen.put("deleted", webhooks.deleteWebhookEndpointWithHttpInfo(registered.getData().getId()).getStatusCode());
    new PlantsApi(authorised).deletePlant(20L, null);
    server.stop(0);
    return seen;
  }

  // A page of plants: its ids (as text, every digit) and the next page's Link, if any.
  private static Map<String, Object> page(ApiResponse<List<StoredPlant>> answer) {
    Map<String, Object> seen = new LinkedHashMap<>();
    seen.put("status", answer.getStatusCode());
    seen.put("ids", answer.getData().stream().map((plant) -> String.valueOf(plant.getId())).toList());
    String next = null;
    for (Map.Entry<String, List<String>> header : answer.getHeaders().entrySet()) {
      if (!header.getKey().equalsIgnoreCase("link")) continue;
      Matcher match = NEXT_PAGE.matcher(header.getValue().get(0));
      if (match.matches()) next = match.group(1);
    }
    seen.put("next", next);
    return seen;
  }

  // The page a Link points at, asked for through the client with its limit and after.
  private static Map<String, Object> nextPage(PlantsApi api, String link) throws ApiException {
    Map<String, String> query = new LinkedHashMap<>();
    for (String pair : URI.create(link).getQuery().split("&")) {
      String[] parts = pair.split("=", 2);
      query.put(parts[0], parts[1]);
    }
    return page(api.listPlantsWithHttpInfo(Integer.valueOf(query.get("limit")), Long.valueOf(query.get("after"))));
  }

  private static Object delete(PlantsApi api, long id) throws IOException {
    try {
      return api.deletePlantWithHttpInfo(id, null).getStatusCode();
    } catch (ApiException failure) {
      return failureOf(failure);
    }
  }

  private static Map<String, Object> failureOf(ApiException failure) throws IOException {
    Map<String, Object> seen = new LinkedHashMap<>();
    // The client leaves an error's body unread; the spec's Error model reads it.
    seen.put("status", failure.getCode());
    seen.put("error", org.plantstore.client.model.Error.fromJson(failure.getResponseBody()));
    return seen;
  }

  private static ApiClient client() {
    return new ApiClient().setBasePath(System.getenv("PLANT_STORE_URL"));
  }

  private static Map<String, Object> update(PlantsApi api, long id, String name, String tag, String ifMatch) throws IOException {
    Map<String, Object> seen = new LinkedHashMap<>();
    try {
      ApiResponse<Plant> answer = api.updatePlantWithHttpInfo(id, new Plant().name(name).tag(tag), ifMatch);
      seen.put("status", answer.getStatusCode());
      seen.put("plant", answer.getData());
    } catch (ApiException failure) {
      return failureOf(failure);
    }
    return seen;
  }

  private static Map<String, Object> create(PlantsApi api, long id, String name, String tag) throws IOException {
    Map<String, Object> seen = new LinkedHashMap<>();
    try {
      ApiResponse<Plant> answer = api.createPlantWithHttpInfo(new NewPlant().id(id).name(name).tag(tag));
      seen.put("status", answer.getStatusCode());
      seen.put("plant", answer.getData());
    } catch (ApiException failure) {
      return failureOf(failure);
    }
    return seen;
  }
}
