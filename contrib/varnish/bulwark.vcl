vcl 4.1;
# Varnish in front of Bulwark, as exact as Bulwark's own page cache: pages
# carry their dependency keys in `xkey` (the `cdn` module), and Bulwark sends
# a PURGE with the keys of every change. Needs Debian's varnish-modules (xkey).
# docs/operations.md, "A cache in front".
import xkey;
import std;

backend bulwark {
    .host = "127.0.0.1";
    .port = "8000";
}

# Who may purge: the Bulwark servers.
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Not allowed"));
        }
        set req.http.n-gone = xkey.purge(req.http.xkey-purge);
        return (synth(200, "Purged " + req.http.n-gone));
    }
    # Logged-on visitors get their own pages from Bulwark.
    if (req.http.Cookie ~ "bulwark_session") {
        return (pass);
    }
    unset req.http.Cookie;
}

sub vcl_backend_response {
    # Kept only what Bulwark marks for a shared cache, for as long as it
    # says; never an answer that sets a cookie.
    if (beresp.http.Surrogate-Control ~ "max-age=" && !beresp.http.Set-Cookie) {
        set beresp.ttl = std.duration(
            regsub(beresp.http.Surrogate-Control, ".*max-age=([0-9]+).*", "\1") + "s", 0s);
        set beresp.grace = 10s;
        unset beresp.http.Surrogate-Control;
        return (deliver);
    }
    set beresp.uncacheable = true;
    set beresp.ttl = 120s;
    return (deliver);
}

sub vcl_deliver {
    if (obj.hits > 0) {
        set resp.http.X-Cache = "hit";
    } else {
        set resp.http.X-Cache = "miss";
    }
    unset resp.http.xkey;
}
