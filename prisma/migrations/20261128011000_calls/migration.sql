-- Calls (v0.5, issue 40): endpoints of kind "http" that `call http "name"` calls.

-- An http endpoint's extra request headers (credentials): the sealed JSON text of {name: value}
-- (engine/sealing/seal.ts), never shown again; `header_names` keeps their names in clear for
-- `GET /api/endpoints`. NULL / empty for other kinds.
ALTER TABLE endpoints ADD COLUMN headers text;
ALTER TABLE endpoints ADD COLUMN header_names text[] NOT NULL DEFAULT '{}';
