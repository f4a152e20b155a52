# An independent check of a slotflow receipt (v0.4 "Receipts"), with Debian's python3-jwcrypto:
#   verify-receipt.py <jwks.json text> <compact JWS> <expected sub> [<expected state> <expected visit>]
# Prints the payload (JSON) and exits 0 when the signature verifies with the JWKS key named by the
# header's kid (ES256 only) and the payload's sub is the expected one — and, when given, its state
# and visit name the expected slot instance (docs/receipts.md); else prints why and exits 1.
import json
import sys

from jwcrypto import jwk, jws

jwks = jwk.JWKSet.from_json(sys.argv[1])
token = sys.argv[2]
expected_sub = sys.argv[3]
try:
    signed = jws.JWS()
    signed.deserialize(token)
    kid = signed.jose_header.get("kid")
    key = jwks.get_key(kid)
    if key is None:
        print("no key %s in the JWKS" % kid)
        sys.exit(1)
    signed.verify(key, alg="ES256")
    payload = json.loads(signed.payload)
except Exception as e:  # any failure to verify is a refusal
    print("invalid: %s" % type(e).__name__)
    sys.exit(1)
if payload.get("sub") != expected_sub:
    print("sub mismatch: %s" % payload.get("sub"))
    sys.exit(1)
if len(sys.argv) > 5 and (payload.get("state") != sys.argv[4] or payload.get("visit") != int(sys.argv[5])):
    print("instance mismatch: %s visit %s" % (payload.get("state"), payload.get("visit")))
    sys.exit(1)
print(json.dumps(payload))
