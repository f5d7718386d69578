/**
 * What memgit answered to each memory call of the demo transcript, recorded from a run and kept so that a
 * replay which drifts from it fails loudly (the scripted server compares every tool_result byte for byte).
 * Regenerate only on purpose: buildDemoStore(dir, { verify: false }) returns the new toolResults.
 */
export const RECORDED_TOOL_RESULTS: Record<string, { content: string; is_error?: true }> = {
  "toolu_01WiL9dv4wtfUQ1VQ3OZRkt4": {
    "content": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories"
  },
  "toolu_01aQng5VP2pv9O5yqeZ1LGKN": {
    "content": "Error: Path must start with /memories, got: customers/acme-logistics/profile.md",
    "is_error": true
  },
  "toolu_019bemzYumle29nmwYfq483X": {
    "content": "File created successfully at: /memories/customers/acme-logistics/profile.md"
  },
  "toolu_01ZZLT2trKieN4QrCIu1isc4": {
    "content": "File created successfully at: /memories/customers/acme-logistics/setup.md"
  },
  "toolu_01UxdJDJmATl4GjUQg1AoeaS": {
    "content": "File created successfully at: /memories/customers/acme-logistics/webhook-signature-fix.md"
  },
  "toolu_01YeUXzENOjqnMD8v0OmeHs4": {
    "content": "Here're the files and directories up to 2 levels deep in /memories/customers/acme-logistics, excluding hidden items and node_modules:\n4K\t/memories/customers/acme-logistics\n203B\t/memories/customers/acme-logistics/profile.md\n215B\t/memories/customers/acme-logistics/setup.md\n498B\t/memories/customers/acme-logistics/webhook-signature-fix.md"
  },
  "toolu_01Wmld0WpixpxbB4r6bSr0pF": {
    "content": "Here's the content of /memories/customers/acme-logistics/profile.md with line numbers:\n     1\t# Acme Logistics (account ACME-20417)\n     2\t\n     3\t## Contacts\n     4\t- Dana Whitfield, platform lead: owns the Parcelhub integration\n     5\t\n     6\t## Preferences\n     7\t- Short answers, code examples in TypeScript\n     8\t- Based in Rotterdam (CET)\n     9\t"
  },
  "toolu_01BOPCWBRDFOxEzf5FJtRBZR": {
    "content": "Here's the content of /memories/customers/acme-logistics/setup.md with line numbers:\n     1\t# Acme Logistics: integration setup\n     2\t\n     3\t- SDK: @parcelhub/node 3.2.1\n     4\t- Region: eu-west-1 (production)\n     5\t- Webhook endpoint: https://hooks.acme-logistics.example/parcelhub\n     6\t- Webhook receiver: Express 5 (since 2026-11-20)\n     7\t"
  },
  "toolu_01AJyu5BKaCKvsYFJGufE0w6": {
    "content": "No replacement was performed, old_str `- SDK: @parcelhub/node v3.2.1` did not appear verbatim in /memories/customers/acme-logistics/setup.md.",
    "is_error": true
  },
  "toolu_01HjwXmDMwmctuUHtirNLU09": {
    "content": "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t# Acme Logistics: integration setup\n     2\t\n     3\t- SDK: @parcelhub/node 3.4.0 (upgraded 2026-11-25)\n     4\t- Region: eu-west-1 (production)\n     5\t- Webhook endpoint: https://hooks.acme-logistics.example/parcelhub"
  },
  "toolu_01X0fmnR7n5FdmueGDmblocO": {
    "content": "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     2\t\n     3\t## Contacts\n     4\t- Dana Whitfield, platform lead: escalations and contract questions\n     5\t- Jonas Berg (jonas.berg@acme-logistics.example): day-to-day integration contact from 2026-11-30\n     6\t"
  },
  "toolu_01KFm7BEKAT3TqFZA7oIzMc0": {
    "content": "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     8\tFix: mount the webhook route with express.raw({ type: 'application/json' }) before\n     9\texpress.json(), and pass req.body (a Buffer) to parcelhub.webhooks.verify().\n    10\tStatus: confirmed fixed by Acme on 2026-11-26.\n    11\t"
  },
  "toolu_01pYJzvItJ17FO6bBlKu8y0X": {
    "content": "Successfully renamed /memories/customers/acme-logistics/webhook-signature-fix.md to /memories/playbooks/webhook-signature-express5.md"
  },
  "toolu_01x7gslTkmH3cmPtbx0Bhc2F": {
    "content": "File created successfully at: /memories/customers/acme-logistics/batch-migration.md"
  },
  "toolu_01yLPvMGvr2Ka1YsHzFXQf1p": {
    "content": "Here're the files and directories up to 2 levels deep in /memories/customers/acme-logistics, excluding hidden items and node_modules:\n4K\t/memories/customers/acme-logistics\n398B\t/memories/customers/acme-logistics/batch-migration.md\n304B\t/memories/customers/acme-logistics/profile.md\n237B\t/memories/customers/acme-logistics/setup.md"
  },
  "toolu_01jwaSyrEGVkOPntkrZeZsRm": {
    "content": "Here's the content of /memories/customers/acme-logistics/profile.md with line numbers:\n     1\t# Acme Logistics (account ACME-20417)\n     2\t\n     3\t## Contacts\n     4\t- Dana Whitfield, platform lead: escalations and contract questions\n     5\t- Jonas Berg (jonas.berg@acme-logistics.example): day-to-day integration contact from 2026-11-30\n     6\t\n     7\t## Preferences\n     8\t- Short answers, code examples in TypeScript\n     9\t- Based in Rotterdam (CET)\n    10\t"
  },
  "toolu_01orPmoE5TZ9dliic8dCO9DD": {
    "content": "Here's the content of /memories/customers/acme-logistics/setup.md with line numbers:\n     1\t# Acme Logistics: integration setup\n     2\t\n     3\t- SDK: @parcelhub/node 3.4.0 (upgraded 2026-11-25)\n     4\t- Region: eu-west-1 (production)\n     5\t- Webhook endpoint: https://hooks.acme-logistics.example/parcelhub\n     6\t- Webhook receiver: Express 5 (since 2026-11-20)\n     7\t"
  },
  "toolu_01TZlJf0Dju5aSqdWssjo12f": {
    "content": "File created successfully at: /memories/customers/acme-logistics/tickets.md"
  },
  "toolu_01B2OlatoaybhHitbwJuQ5gK": {
    "content": "The file /memories/customers/acme-logistics/profile.md has been edited."
  },
  "toolu_01tQyz0HLEvN7TbK47gQcpob": {
    "content": "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     3\t## Contacts\n     4\t- Dana Whitfield, platform lead: escalations and contract questions\n     5\t- Jonas Berg (jonas.berg@acme-logistics.example): day-to-day integration contact from 2026-11-30; prefers email for follow-ups\n     6\t\n     7\t## Preferences"
  },
  "toolu_01eiOLS4GMtbtK4FEzkQxYIS": {
    "content": "Successfully deleted /memories/customers/acme-logistics/batch-migration.md"
  },
  "toolu_01TCguXPeGq0eKoNy5cQ0uyV": {
    "content": "The file /memories/customers/acme-logistics/setup.md has been edited."
  }
};
