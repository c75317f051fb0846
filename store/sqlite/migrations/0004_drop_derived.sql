-- The session model is kept as rows (0003); the documents it replaced go.
DROP TABLE IF EXISTS derived_agents;
DROP TABLE IF EXISTS derived;
