// One conversation per scope. The write MERGEs it on the scope, so concurrent first adds of a scope
// cannot create two logs; its write lock then serialises their seq assignment.
// Parameters: none
CREATE CONSTRAINT conversation_scope_unique IF NOT EXISTS
FOR (c:Conversation) REQUIRE c.scope IS UNIQUE
