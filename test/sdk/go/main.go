// A consumer of the generated Go client (sdk/go) against a live service. Reads PLANT_STORE_URL,
// PLANT_STORE_TOKEN and PLANT_STORE_READ_TOKEN (a token that may only read), sends the round
// trip that every SDK's consumer sends (test/sdk/round-trips.ts says what each answer must be)
// and prints what it saw as one JSON object. Last, it registers a webhook endpoint (a receiver of
// its own on 127.0.0.1) and checks the signature of what it receives. Standard Webhooks' Go
// library is fetched from GitHub, which the machines that run this cannot reach, so the check is
// the standard's own recipe written here with Go's crypto/hmac.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	plantstore "plant-store/sdk/go"
)

var nextPage = regexp.MustCompile(`^<([^>]*)>; rel="next"$`)

// A page of plants: its ids (as text, every digit) and the next page's Link, if any.
type page struct {
	Status int      `json:"status"`
	Ids    []string `json:"ids"`
	Next   *string  `json:"next"`
}

type observation struct {
	Status int               `json:"status"`
	Plant  *plantstore.Plant `json:"plant,omitempty"`
	Error  *plantstore.Error `json:"error,omitempty"`
}

func main() {
	configuration := plantstore.NewConfiguration()
	configuration.Servers = plantstore.ServerConfigurations{{URL: os.Getenv("PLANT_STORE_URL")}}
	client := plantstore.NewAPIClient(configuration)
	authorised := context.WithValue(context.Background(), plantstore.ContextAccessToken, os.Getenv("PLANT_STORE_TOKEN"))
	anonymous := context.Background()

	health, _, err := client.OperationsAPI.GetHealth(anonymous).Execute()
	if err != nil {
		fail(err)
	}
	seen := map[string]any{
		"create":        create(client, authorised, 10, "Monstera", "aroid"),
		"replay":        create(client, authorised, 10, "Monstera", "aroid"),
		"conflict":      create(client, authorised, 10, "Fern", ""),
		"missingToken":  create(client, anonymous, 11, "Fern", ""),
		"largestId":     create(client, authorised, math.MaxInt64, "Largest", ""),
		"smallestId":    create(client, authorised, math.MinInt64, "Smallest", ""),
		"beyondDoubles": create(client, authorised, 1<<53+1, "Aloe", ""),
		"health":        health.Status,
	}
	first := pageOf(client.PlantsAPI.ListPlants(authorised).Limit(1).Execute())
	seen["firstPage"] = first
	if first.Next == nil {
		fail(errors.New("the first page of one plant has no next page"))
	}
	seen["secondPage"] = followed(client, authorised, *first.Next)
	seen["updated"] = updated(client, authorised, 10, "Monstera", "climber", "")
	seen["staleUpdate"] = updated(client, authorised, 10, "Monstera", "", `"stale"`)
	seen["updateMissing"] = updated(client, authorised, 11, "Fern", "", "")
	seen["deleted"] = deleted(client, authorised, 10)
	seen["deletedAgain"] = deleted(client, authorised, 10)
	reader := context.WithValue(context.Background(), plantstore.ContextAccessToken, os.Getenv("PLANT_STORE_READ_TOKEN"))
	seen["forbidden"] = create(client, reader, 12, "Fern", "")
	seen["webhook"] = webhook(client, authorised)
	output, err := json.Marshal(seen)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(output))
}

func create(client *plantstore.APIClient, ctx context.Context, id int64, name string, tag string) observation {
	newPlant := plantstore.NewNewPlantBody(name, id)
	if tag != "" {
		newPlant.SetTag(tag)
	}
	plant, response, err := client.PlantsAPI.CreatePlant(ctx).NewPlantBody(*newPlant).Execute()
	return observed(plant, response, err)
}

// What a create or an update came to: the plant, or the spec's Error.
func observed(plant *plantstore.Plant, response *http.Response, err error) observation {
	if response == nil {
		fail(err)
	}
	seen := observation{Status: response.StatusCode, Plant: plant}
	var apiError *plantstore.GenericOpenAPIError
	if errors.As(err, &apiError) {
		// The client reads every status the spec declares into its Error model.
		model, isError := apiError.Model().(plantstore.Error)
		if !isError {
			fail(fmt.Errorf("a %d without the spec's Error body: %s", response.StatusCode, apiError.Body()))
		}
		seen.Plant = nil
		seen.Error = &model
	} else if err != nil {
		fail(err)
	}
	return seen
}

func updated(client *plantstore.APIClient, ctx context.Context, id int64, name string, tag string, ifMatch string) observation {
	plant := plantstore.NewPlant(name)
	if tag != "" {
		plant.SetTag(tag)
	}
	update := client.PlantsAPI.UpdatePlant(ctx, id).Plant(*plant)
	if ifMatch != "" {
		update = update.IfMatch(ifMatch)
	}
	stored, response, err := update.Execute()
	return observed(stored, response, err)
}

func pageOf(plants []plantstore.StoredPlant, response *http.Response, err error) page {
	if err != nil {
		fail(err)
	}
	seen := page{Status: response.StatusCode, Ids: []string{}}
	for _, plant := range plants {
		seen.Ids = append(seen.Ids, strconv.FormatInt(plant.GetId(), 10))
	}
	if match := nextPage.FindStringSubmatch(response.Header.Get("Link")); match != nil {
		seen.Next = &match[1]
	}
	return seen
}

// The page a Link points at, asked for through the client with its limit and after.
func followed(client *plantstore.APIClient, ctx context.Context, link string) page {
	next, err := url.Parse(link)
	if err != nil {
		fail(err)
	}
	limit, err := strconv.ParseInt(next.Query().Get("limit"), 10, 32)
	if err != nil {
		fail(err)
	}
	after, err := strconv.ParseInt(next.Query().Get("after"), 10, 64)
	if err != nil {
		fail(err)
	}
	return pageOf(client.PlantsAPI.ListPlants(ctx).Limit(int32(limit)).After(after).Execute())
}

func deleted(client *plantstore.APIClient, ctx context.Context, id int64) any {
	response, err := client.PlantsAPI.DeletePlant(ctx, id).Execute()
	if response == nil {
		fail(err)
	}
	var apiError *plantstore.GenericOpenAPIError
	if errors.As(err, &apiError) {
		model, isError := apiError.Model().(plantstore.Error)
		if !isError {
			fail(fmt.Errorf("a %d without the spec's Error body: %s", response.StatusCode, apiError.Body()))
		}
		return observation{Status: response.StatusCode, Error: &model}
	} else if err != nil {
		fail(err)
	}
	return response.StatusCode
}

type delivery struct {
	header http.Header
	body   string
}

// Registers a receiver for newPlant, creates a plant, and checks the delivery it gets.
func webhook(client *plantstore.APIClient, ctx context.Context) map[string]any {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	deliveries := make(chan delivery, 1)
	server := &http.Server{Handler: http.HandlerFunc(func(writer http.ResponseWriter, request *http.Request) {
		body, _ := io.ReadAll(request.Body)
		writer.WriteHeader(http.StatusNoContent)
		deliveries <- delivery{header: request.Header, body: string(body)}
	})}
	go server.Serve(listener)
	defer server.Close()
	registration := plantstore.NewNewWebhookEndpointBody(fmt.Sprintf("http://%s/hook", listener.Addr()))
	registration.SetEvents([]string{"newPlant"})
	endpoint, response, err := client.WebhooksAPI.CreateWebhookEndpoint(ctx).NewWebhookEndpointBody(*registration).Execute()
	if err != nil {
		fail(err)
	}
	create(client, ctx, 20, "Webhook fern", "")
	var received delivery
	select {
	case received = <-deliveries:
	case <-time.After(15 * time.Second):
		fail(errors.New("no webhook arrived within 15 s"))
	}
	verify(endpoint.GetSecret(), received)
	var event plantstore.NewPlantEvent
	if err := json.Unmarshal([]byte(received.body), &event); err != nil {
		fail(err)
	}
	listed, _, err := client.WebhooksAPI.ListWebhookEndpoints(ctx).Execute()
	if err != nil {
		fail(err)
	}
	states := []string{}
	for _, listedEndpoint := range listed {
		states = append(states, listedEndpoint.GetState())
	}
	deletedResponse, err := client.WebhooksAPI.DeleteWebhookEndpoint(ctx, endpoint.GetId()).Execute()
	if err != nil {
		fail(err)
	}
	deleted(client, ctx, 20)
	data := event.GetData()
	return map[string]any{
		"registered": response.StatusCode, "listed": states, "type": event.GetType(),
		"plant": data.GetName(), "sameAsModel": data.GetName(), "deleted": deletedResponse.StatusCode,
	}
}

// Standard Webhooks v1: one of the space-separated "v1,<base64>" signatures is the HMAC-SHA256 of
// "{webhook-id}.{webhook-timestamp}.{body}" keyed with the bytes of the secret after "whsec_".
func verify(secret string, received delivery) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		fail(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(received.header.Get("webhook-id") + "." + received.header.Get("webhook-timestamp") + "." + received.body))
	expected := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, signature := range strings.Split(received.header.Get("webhook-signature"), " ") {
		if hmac.Equal([]byte(signature), []byte(expected)) {
			return
		}
	}
	fail(errors.New("no signature of the webhook verifies"))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
