"""A real S3 endpoint for the tests: moto's server on the loopback interface.

moto's ``ThreadedMotoServer`` answers S3's HTTP API on ``127.0.0.1`` and a
free port; s3fs, obstore, boto3 and the ``fixedutf32`` command reach it
over TCP, as they reach AWS (no in-process mocking of boto or HTTP).  The
fixture ``s3_server`` in conftest.py starts one per test session.
"""

import contextlib
import logging
import socket

# What every client is given: moto accepts any key pair, but the SDKs refuse
# to sign a request without one.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on (at the time of asking)."""
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class S3Server:
    """moto's S3 server on ``127.0.0.1:<free port>``, with its buckets.

    Attributes
    ----------
    url : str
        ``http://127.0.0.1:<port>``: the endpoint to give every client.
    """

    def __init__(self):
        from moto.server import ThreadedMotoServer

        # werkzeug logs every request at INFO on stderr.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._client = None

    def start(self):
        self._server.start()
        return self

    def stop(self):
        self._server.stop()

    @property
    def client(self):
        """A boto3 S3 client on the server."""
        if self._client is None:
            import boto3

            self._client = boto3.client(
                "s3",
                endpoint_url=self.url,
                aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                region_name=CREDENTIALS["AWS_DEFAULT_REGION"],
            )
        return self._client

    def make_bucket(self, name):
        self.client.create_bucket(Bucket=name)
        return name

    def put(self, bucket, key, data):
        """Store ``data`` at ``key`` exactly as spelled (``..`` and ``//`` included)."""
        self.client.put_object(Bucket=bucket, Key=key, Body=bytes(data))

    def keys(self, bucket, prefix=""):
        """Every key under ``prefix``, as the server lists them."""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def storage_options(self):
        """fsspec's options for s3fs on this server (the credentials come from the environment)."""
        return {"endpoint_url": self.url}

    def environment(self):
        """The variables that point the SDKs and the ``fixedutf32`` command at this server."""
        return {
            **CREDENTIALS,
            "AWS_ENDPOINT_URL": self.url,  # botocore (s3fs) and obstore
            "AWS_ALLOW_HTTP": "true",  # obstore: plain HTTP on the loopback interface
            "AWS_EC2_METADATA_DISABLED": "true",  # no metadata-service lookups
        }
