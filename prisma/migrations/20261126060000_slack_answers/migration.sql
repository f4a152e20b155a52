-- Answers inside Slack (v0.4): a slack-app endpoint's settings, and the messages posted with answer controls.

-- A slack-app endpoint's settings: {channel, answerAs: {roles}, allowUsers, botToken, signingSecret};
-- botToken and signingSecret are sealed (the JSON text of a sealed envelope). NULL for other kinds.
ALTER TABLE endpoints ADD COLUMN slack jsonb;

-- One message posted to Slack with controls answering one slot. `ref` is the opaque reference the
-- controls carry (random, never a link token). `question` and `response_url` are sealed.
-- status: 'open' (controls shown) | 'closed' (replaced by the outcome; `outcome` says how).
CREATE TABLE slack_messages (
  ref text PRIMARY KEY,
  run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  slot_id uuid NOT NULL,
  alias text NOT NULL,
  endpoint text NOT NULL,
  channel text,
  ts text,
  question text NOT NULL,
  controls jsonb NOT NULL,
  response_url text,
  status text NOT NULL DEFAULT 'open',
  outcome text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  closed_at timestamptz(3)
);
CREATE INDEX slack_messages_open_idx ON slack_messages (run_id, slot_id);
