"""A consumer of the generated Python client (sdk/python) against a live service.

Reads PLANT_STORE_URL and PLANT_STORE_TOKEN, sends the round trip that every SDK's consumer sends
(test/sdk/round-trips.ts says what each answer must be) and prints what it saw as one JSON object.
"""
import json
import os

import plant_store_client as plant_store
from plant_store_client.exceptions import ApiException

URL = os.environ["PLANT_STORE_URL"]
TOKEN = os.environ["PLANT_STORE_TOKEN"]
LARGEST_INT64 = 2**63 - 1
SMALLEST_INT64 = -(2**63)


def client(token=None):
    return plant_store.ApiClient(plant_store.Configuration(host=URL, access_token=token))


def create(api, plant_id, name, tag=None):
    try:
        answer = api.create_plant_with_http_info(plant_store.NewPlant(id=plant_id, name=name, tag=tag))
        return {"status": answer.status_code, "plant": answer.data.to_dict()}
    except ApiException as failure:
        # The client reads every status the spec declares into its Error model.
        return {"status": failure.status, "error": failure.data.to_dict() if failure.data else None}


with client(TOKEN) as authorised, client() as anonymous:
    plants = plant_store.PlantsApi(authorised)
    seen = {
        "create": create(plants, 10, "Monstera", "aroid"),
        "replay": create(plants, 10, "Monstera", "aroid"),
        "conflict": create(plants, 10, "Fern"),
        "missingToken": create(plant_store.PlantsApi(anonymous), 11, "Fern"),
        "largestId": create(plants, LARGEST_INT64, "Largest"),
        "smallestId": create(plants, SMALLEST_INT64, "Smallest"),
        "beyondDoubles": create(plants, 2**53 + 1, "Aloe"),
        "health": plant_store.OperationsApi(anonymous).get_health().status,
    }
print(json.dumps(seen))
