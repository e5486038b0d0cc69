// A consumer of the generated Go client (sdk/go) against a live service. Reads PLANT_STORE_URL
// and PLANT_STORE_TOKEN, sends the round trip that every SDK's consumer sends
// (test/sdk/round-trips.ts says what each answer must be) and prints what it saw as one JSON
// object.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	plantstore "plant-store/sdk/go"
)

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

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
