-- A statement that must refuse its whole effect calls this: it raises the given SQLSTATE and message, so
-- the statement (and the transaction it runs in) changes nothing. A turn's opening uses it to refuse a
-- priced turn whose paying balance is empty ('DT402'), checked against the balance as it is when the
-- record would be written.
CREATE OR REPLACE FUNCTION refuse_statement(code text, message text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
END
$$;
