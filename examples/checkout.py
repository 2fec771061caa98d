"""A small checkout service: the sample the demo reads with faultline's code tools."""
import json
import time
import urllib.request


class PaymentClient:
    def __init__(self, base_url, timeout=2.0):
        self.base_url = base_url
        self.timeout = timeout

    def charge(self, order_id, cents):
        body = json.dumps({"order": order_id, "amount": cents}).encode()
        request = urllib.request.Request(f"{self.base_url}/charge", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            return json.load(response)


def retry(attempts=3, delay=0.2):
    def wrap(call):
        def attempt(*args, **kwargs):
            for n in range(attempts):
                try:
                    return call(*args, **kwargs)
                except OSError:
                    if n == attempts - 1:
                        raise
                    time.sleep(delay * 2**n)
        return attempt
    return wrap


@retry(attempts=3)
def checkout(client, order_id, items):
    total = sum(item["price"] * item["quantity"] for item in items)
    return client.charge(order_id, total)
