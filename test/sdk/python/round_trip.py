"""A consumer of the generated Python client (sdk/python) against a live service.

Reads PLANT_STORE_URL, PLANT_STORE_TOKEN and PLANT_STORE_READ_TOKEN (a token that may only read),
sends the round trip that every SDK's consumer sends (test/sdk/round-trips.ts says what each
answer must be) and prints what it saw as one JSON object. Last, it registers a webhook endpoint
(a receiver of its own on 127.0.0.1) and verifies what it receives with the Standard Webhooks
library from PyPI.
"""
import http.server
import json
import os
import re
import threading
from urllib.parse import parse_qs, urlsplit

import plant_store_client as plant_store
from plant_store_client.exceptions import ApiException
from standardwebhooks.webhooks import Webhook

URL = os.environ["PLANT_STORE_URL"]
TOKEN = os.environ["PLANT_STORE_TOKEN"]
READ_TOKEN = os.environ["PLANT_STORE_READ_TOKEN"]
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
        return failure_of(failure)


def failure_of(failure):
    return {"status": failure.status, "error": failure.data.to_dict() if failure.data else None}


def page(answer):
    """A page of plants: its ids (as text, every digit) and the next page's Link, if any."""
    link = answer.headers.get("link")
    match = re.fullmatch(r'<([^>]*)>; rel="next"', link) if link else None
    return {"status": answer.status_code, "ids": [str(plant.id) for plant in answer.data], "next": match.group(1) if match else None}


def next_page(api, link):
    """The page a Link points at, asked for through the client with its limit and after."""
    query = parse_qs(urlsplit(link).query)
    return page(api.list_plants_with_http_info(limit=int(query["limit"][0]), after=int(query["after"][0])))


def update(api, plant_id, name, tag=None, if_match=None):
    try:
        answer = api.update_plant_with_http_info(plant_id, plant_store.Plant(name=name, tag=tag), if_match=if_match)
        return {"status": answer.status_code, "plant": answer.data.to_dict()}
    except ApiException as failure:
        return failure_of(failure)


def delete(api, plant_id):
    try:
        return api.delete_plant_with_http_info(plant_id).status_code
    except ApiException as failure:
        return failure_of(failure)


def webhook(api_client):
    """Registers a receiver for newPlant, creates a plant, and verifies the delivery it gets."""
    received = []
    arrived = threading.Event()

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"])).decode("utf-8")
            received.append(({name.lower(): value for name, value in self.headers.items()}, body))
            self.send_response(204)
            self.end_headers()
            arrived.set()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    webhooks = plant_store.WebhooksApi(api_client)
    # The spec's pattern for url refuses a loopback URL, which only a service started with
    # WEBHOOK_ALLOW_LOOPBACK (as this one is) registers: the model is built without the client's
    # own check of the pattern.
    registered = webhooks.create_webhook_endpoint_with_http_info(
        plant_store.NewWebhookEndpoint.model_construct(url=f"http://127.0.0.1:{server.server_port}/hook", events=["newPlant"]))
    plant_store.PlantsApi(api_client).create_plant(plant_store.NewPlant(id=20, name="Webhook fern"))
    arrived.wait(15)
    headers, body = received[0]
    event = Webhook(registered.data.secret).verify(body, headers)
    seen = {
        "registered": registered.status_code,
        "listed": [endpoint.state for endpoint in webhooks.list_webhook_endpoints()],
        "type": event["type"],
        "plant": event["data"]["name"],
        "sameAsModel": plant_store.NewPlantEvent.from_json(body).data.name,
        "deleted": webhooks.delete_webhook_endpoint_with_http_info(registered.data.id).status_code,
    }
    delete(plant_store.PlantsApi(api_client), 20)
    server.shutdown()
    return seen


with client(TOKEN) as authorised, client() as anonymous, client(READ_TOKEN) as reader:
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
    seen["firstPage"] = page(plants.list_plants_with_http_info(limit=1))
    seen["secondPage"] = next_page(plants, seen["firstPage"]["next"])
    seen["updated"] = update(plants, 10, "Monstera", "climber")
    seen["staleUpdate"] = update(plants, 10, "Monstera", if_match='"stale"')
    seen["updateMissing"] = update(plants, 11, "Fern")
    seen["deleted"] = delete(plants, 10)
    seen["deletedAgain"] = delete(plants, 10)
    seen["forbidden"] = create(plant_store.PlantsApi(reader), 12, "Fern")
    seen["webhook"] = webhook(authorised)
print(json.dumps(seen))
