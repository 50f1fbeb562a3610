/** The client behind a request: the socket's peer, or X-Forwarded-For when (and only when) the peer is a trusted proxy. */
import assert from "node:assert/strict";
import { clientAddress, compileTrustedProxies, NO_TRUSTED_PROXIES } from "../../coordinator/api/client-address.js";

describe("client address", () => {
  const proxies = compileTrustedProxies(["10.0.0.0/8", "192.168.1.5", "::1", "fd00::/8"]);

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy (a client cannot pick its bucket)", () => {
    assert.equal(clientAddress("203.0.113.9", "198.51.100.1", proxies), "203.0.113.9");
    assert.equal(clientAddress("127.0.0.1", "198.51.100.1", NO_TRUSTED_PROXIES), "127.0.0.1");
  });

  it("takes the rightmost address that is not a trusted proxy when the peer is one", () => {
    assert.equal(clientAddress("10.1.2.3", "198.51.100.1", proxies), "198.51.100.1");
    // A client's own forged entry sits left of what the proxy appended: it is never reached.
    assert.equal(clientAddress("10.1.2.3", "6.6.6.6, 198.51.100.1", proxies), "198.51.100.1");
    // Two proxies in a row (a CDN in front of the load balancer, both trusted).
    assert.equal(clientAddress("10.1.2.3", "198.51.100.1, 192.168.1.5", proxies), "198.51.100.1");
    assert.equal(clientAddress("::1", ["198.51.100.7", "10.9.9.9"], proxies), "198.51.100.7");
  });

  it("reads IPv4-mapped peers, ports and brackets, and stops at something that is not an address", () => {
    assert.equal(clientAddress("::ffff:10.0.0.1", "198.51.100.1:4711", proxies), "198.51.100.1");
    assert.equal(clientAddress("fd00::5", "[2001:db8::1]:443", proxies), "2001:db8::1");
    assert.equal(clientAddress("10.0.0.1", "not-an-address", proxies), "10.0.0.1");
    assert.equal(clientAddress("10.0.0.1", undefined, proxies), "10.0.0.1");
  });

  it("refuses entries that are not an address or a CIDR range, naming them", () => {
    assert.throws(() => compileTrustedProxies(["10.0.0.0/33"]), /"10.0.0.0\/33" is not an IP address or CIDR range/);
    assert.throws(() => compileTrustedProxies(["proxy.internal"]), /"proxy.internal"/);
    assert.throws(() => compileTrustedProxies(["10.0.0.0/8/1"]), /not an IP address/);
  });
});
