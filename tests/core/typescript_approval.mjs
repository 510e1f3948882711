// The TypeScript SDK's client (@modelcontextprotocol/client) approving a tool marked confirm by form.
//
// node typescript_approval.mjs <mcp-url> <legacy|2026-07-28> <accept|decline|cancel>
//
// The client declares form elicitation and answers every question with the
// given action; it calls delete_note(note_id=7) and prints
// {"asked": [messages], "isError": bool, "text": first text block}.
// Any failure is printed as {"error": message} with exit status 1.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [serverUrl, mode, action] = process.argv.slice(2);

async function main() {
    const versionNegotiation = mode === 'legacy' ? { mode: 'legacy' } : { mode: { pin: mode } };
    const client = new Client(
        { name: 'flask-mcp-approval', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation },
    );
    const asked = [];
    client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params.message);
        return action === 'accept' ? { action, content: {} } : { action };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl)));
    const result = await client.callTool({ name: 'delete_note', arguments: { note_id: 7 } });
    process.stdout.write(
        JSON.stringify({ asked, isError: result.isError ?? false, text: result.content[0].text }) + '\n',
    );
    await client.close();
}

main().then(
    () => process.exit(0),
    (error) => {
        process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + '\n');
        process.exit(1);
    },
);
