// The TypeScript SDK's OAuth client against a flask_mcp authorization server.
//
// node typescript_client.mjs <mcp-url> <legacy|2026-07-28> <redirect-url>
//
// The client discovers the server, registers dynamically, and asks for an
// authorization: it prints {"authorize": url} on stdout and reads the URL the
// user's browser was sent back to (one line on stdin). It then redeems the
// code, connects again with the token, calls whoami and prints {"whoami": text}.
// Any failure is printed as {"error": message} with exit status 1.
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

const [serverUrl, mode, redirectUrl] = process.argv.slice(2);

function say(message) {
    process.stdout.write(JSON.stringify(message) + '\n');
}

/** An in-memory OAuthClientProvider: one session, one user. */
class MemoryProvider {
    constructor(redirect) {
        this.redirect = redirect;
        this.expectedState = randomBytes(16).toString('hex');
        this.authorizationUrl = undefined;
        this.saved = {};
    }
    get redirectUrl() {
        return this.redirect;
    }
    get clientMetadata() {
        return {
            client_name: 'TypeScript SDK client',
            redirect_uris: [this.redirect],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
        };
    }
    state() {
        return this.expectedState;
    }
    clientInformation() {
        return this.saved.client;
    }
    saveClientInformation(information) {
        this.saved.client = information;
    }
    tokens() {
        return this.saved.tokens;
    }
    saveTokens(tokens) {
        this.saved.tokens = tokens;
    }
    redirectToAuthorization(url) {
        this.authorizationUrl = url;
    }
    saveCodeVerifier(verifier) {
        this.saved.verifier = verifier;
    }
    codeVerifier() {
        return this.saved.verifier;
    }
    // Kept with the verifier: the code is redeemed only at the server it was asked from.
    saveDiscoveryState(state) {
        this.saved.discovery = state;
    }
    discoveryState() {
        return this.saved.discovery;
    }
}

function connect(provider) {
    const versionNegotiation = mode === 'legacy' ? { mode: 'legacy' } : { mode: { pin: mode } };
    const client = new Client({ name: 'flask-mcp-oauth-interop', version: '1.0.0' }, { versionNegotiation });
    const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
    return { client, transport };
}

async function nextLine() {
    const lines = createInterface({ input: process.stdin });
    for await (const line of lines) {
        lines.close();
        return line.trim();
    }
    throw new Error('stdin closed before the callback URL came');
}

async function main() {
    const provider = new MemoryProvider(redirectUrl);
    const first = connect(provider);
    try {
        await first.client.connect(first.transport);
        throw new Error('the server let an unauthenticated client connect');
    } catch (error) {
        if (!(error instanceof UnauthorizedError) || provider.authorizationUrl === undefined) {
            throw error;
        }
    }
    say({ authorize: provider.authorizationUrl.href });
    const callback = new URL(await nextLine());
    if (callback.searchParams.get('state') !== provider.expectedState) {
        throw new Error('the callback carries another state');
    }
    // finishAuth checks iss against the issuer (RFC 9207) before redeeming the code.
    await first.transport.finishAuth(callback.searchParams);
    const second = connect(provider);
    await second.client.connect(second.transport);
    const result = await second.client.callTool({ name: 'whoami', arguments: {} });
    say({ whoami: result.content[0].text, scope: provider.saved.tokens.scope });
    await second.client.close();
}

main().then(
    () => process.exit(0),
    (error) => {
        say({ error: String(error && error.stack ? error.stack : error) });
        process.exit(1);
    },
);
