#!/usr/bin/env python3
"""Serves OpenStack Placement's WSGI application (placement.wsgi.api, configured from
$OS_PLACEMENT_CONFIG_DIR/placement.conf) on a threaded wsgiref server, as a deployment's uwsgi
or mod_wsgi would. Usage: placement_serve.py PORT"""
import socketserver
import sys
from wsgiref import simple_server


class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass  # the access log is placement's own request log


class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


if __name__ == "__main__":
    from placement.wsgi import api
    httpd = simple_server.make_server("127.0.0.1", int(sys.argv[1]), api.application,
                                      server_class=Server, handler_class=Quiet)
    httpd.serve_forever()
