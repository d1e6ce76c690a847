//! The schemas the core API's descriptions refer to (`#/components/schemas/...`).

use serde_json::json;

use bulwark_web::Api;

/// Adds them to `api`.
pub(super) fn add_schemas(api: Api) -> Api {
    api
        .schema(
            "Props",
            || json!({
                "type": "object",
                "description": "The resource's properties (title, summary, body, ...): any JSON values. Text and HTML are sanitised when saved.",
                "additionalProperties": true
            }),
        )
        .schema(
            "Resource",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "id",
                    "name",
                    "category",
                    "published",
                    "publication_start",
                    "publication_end",
                    "visibility",
                    "content_group",
                    "creator",
                    "modifier",
                    "version",
                    "created",
                    "modified",
                    "props"
                ],
                "properties": {
                    "id": {
                        "type": "integer",
                        "format": "int64"
                    },
                    "name": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "description": "The unique name, if any."
                    },
                    "category": {
                        "type": "string"
                    },
                    "published": {
                        "type": "boolean"
                    },
                    "publication_start": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "format": "date-time"
                    },
                    "publication_end": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "format": "date-time"
                    },
                    "visibility": {
                        "type": "string",
                        "enum": [
                            "public",
                            "members",
                            "group"
                        ]
                    },
                    "content_group": {
                        "type": [
                            "integer",
                            "null"
                        ],
                        "format": "int64"
                    },
                    "creator": {
                        "type": [
                            "integer",
                            "null"
                        ],
                        "format": "int64"
                    },
                    "modifier": {
                        "type": [
                            "integer",
                            "null"
                        ],
                        "format": "int64"
                    },
                    "version": {
                        "type": "integer",
                        "format": "int64",
                        "description": "Send it back in If-Match to change exactly this version."
                    },
                    "created": {
                        "type": "string",
                        "format": "date-time"
                    },
                    "modified": {
                        "type": "string",
                        "format": "date-time"
                    },
                    "props": {
                        "$ref": "#/components/schemas/Props"
                    }
                }
            }),
        )
        .schema(
            "NewResource",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "category"
                ],
                "properties": {
                    "category": {
                        "type": "string",
                        "description": "A category's unique name (article, text, person, ...)."
                    },
                    "name": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "description": "A unique name: lower-case letters, digits and _."
                    },
                    "published": {
                        "type": "boolean",
                        "default": false
                    },
                    "publication_start": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "format": "date-time"
                    },
                    "publication_end": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "format": "date-time"
                    },
                    "visibility": {
                        "type": "string",
                        "enum": [
                            "public",
                            "members",
                            "group"
                        ],
                        "default": "public"
                    },
                    "content_group": {
                        "type": [
                            "integer",
                            "null"
                        ],
                        "format": "int64",
                        "description": "With visibility group: the content group's id."
                    },
                    "props": {
                        "$ref": "#/components/schemas/Props"
                    }
                }
            }),
        )
        .schema(
            "ResourcePatch",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "name": {
                        "type": [
                            "string",
                            "null"
                        ]
                    },
                    "category": {
                        "type": "string"
                    },
                    "published": {
                        "type": "boolean"
                    },
                    "publication_start": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "format": "date-time"
                    },
                    "publication_end": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "format": "date-time"
                    },
                    "visibility": {
                        "type": "string",
                        "enum": [
                            "public",
                            "members",
                            "group"
                        ]
                    },
                    "content_group": {
                        "type": [
                            "integer",
                            "null"
                        ],
                        "format": "int64"
                    },
                    "props": {
                        "$ref": "#/components/schemas/Props"
                    }
                }
            }),
        )
        .schema(
            "Edge",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "id",
                    "predicate",
                    "object",
                    "seq",
                    "created"
                ],
                "properties": {
                    "id": {
                        "type": "integer",
                        "format": "int64"
                    },
                    "predicate": {
                        "type": "string"
                    },
                    "object": {
                        "type": "integer",
                        "format": "int64"
                    },
                    "seq": {
                        "type": "integer",
                        "format": "int64",
                        "description": "Place in the subject's list for this predicate."
                    },
                    "created": {
                        "type": "string",
                        "format": "date-time"
                    }
                }
            }),
        )
        .schema(
            "NewEdge",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "predicate",
                    "object"
                ],
                "properties": {
                    "predicate": {
                        "type": "string"
                    },
                    "object": {
                        "type": "integer",
                        "format": "int64"
                    },
                    "position": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Where in the list (0 is first); the end when left out."
                    }
                }
            }),
        )
        .schema(
            "EdgeMove",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "position"
                ],
                "properties": {
                    "position": {
                        "type": "integer",
                        "minimum": 0
                    }
                }
            }),
        )
        .schema(
            "Revision",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "id",
                    "version",
                    "created",
                    "modifier",
                    "resource"
                ],
                "properties": {
                    "id": {
                        "type": "integer",
                        "format": "int64"
                    },
                    "version": {
                        "type": "integer",
                        "format": "int64"
                    },
                    "created": {
                        "type": "string",
                        "format": "date-time"
                    },
                    "modifier": {
                        "type": [
                            "integer",
                            "null"
                        ],
                        "format": "int64"
                    },
                    "resource": {
                        "$ref": "#/components/schemas/Resource"
                    }
                }
            }),
        )
        .schema(
            "SearchPage",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "items",
                    "total",
                    "page",
                    "pages"
                ],
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "$ref": "#/components/schemas/Resource"
                        }
                    },
                    "total": {
                        "type": "integer",
                        "minimum": 0
                    },
                    "page": {
                        "type": "integer",
                        "minimum": 1
                    },
                    "pages": {
                        "type": "integer",
                        "minimum": 0
                    }
                }
            }),
        )
        .schema(
            "AccessRule",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "group",
                    "actions"
                ],
                "properties": {
                    "group": {
                        "type": "string",
                        "description": "A user group; the rule holds for every group below it too."
                    },
                    "actions": {
                        "type": "array",
                        "items": {
                            "type": "string",
                            "enum": [
                                "view",
                                "insert",
                                "update",
                                "delete",
                                "link"
                            ]
                        }
                    },
                    "content_group": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "description": "\"default\" or a content group's unique name; absent or null: every content group."
                    },
                    "categories": {
                        "type": "array",
                        "items": {
                            "type": "string"
                        },
                        "description": "Category names (and everything below them); empty: every category."
                    },
                    "own": {
                        "type": "boolean",
                        "description": "Only to resources they made (their creator), and to new ones; absent: false."
                    }
                }
            }),
        )
        .schema(
            "AccessRules",
            || json!({
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "stored",
                    "rules"
                ],
                "properties": {
                    "stored": {
                        "type": "boolean",
                        "description": "Whether the rules come from the database (else from site.toml or the defaults)."
                    },
                    "rules": {
                        "type": "array",
                        "items": {
                            "$ref": "#/components/schemas/AccessRule"
                        }
                    }
                }
            }),
        )
        .schema(
            "Category",
            || json!({
                "type": "object",
                "required": [
                    "id",
                    "name",
                    "title",
                    "parent",
                    "depth",
                    "may_change"
                ],
                "properties": {
                    "id": {
                        "type": "integer",
                        "format": "int64"
                    },
                    "name": {
                        "type": "string"
                    },
                    "title": {},
                    "parent": {
                        "type": [
                            "string",
                            "null"
                        ],
                        "description": "The parent category's name; null at the top."
                    },
                    "depth": {
                        "type": "integer"
                    },
                    "may_change": {
                        "type": "boolean",
                        "description": "Whether the caller may move it."
                    }
                }
            }),
        )
        .schema(
            "Categories",
            || json!({
                "type": "object",
                "required": [
                    "categories"
                ],
                "properties": {
                    "categories": {
                        "type": "array",
                        "items": {
                            "$ref": "#/components/schemas/Category"
                        },
                        "description": "The tree, parents before their children, siblings in order."
                    }
                }
            }),
        )
        .schema(
            "Predicate",
            || json!({
                "type": "object",
                "required": [
                    "id",
                    "name",
                    "title",
                    "subjects",
                    "objects",
                    "may_change"
                ],
                "properties": {
                    "id": {
                        "type": "integer",
                        "format": "int64"
                    },
                    "name": {
                        "type": "string"
                    },
                    "title": {},
                    "subjects": {
                        "type": "array",
                        "items": {
                            "type": "string"
                        },
                        "description": "Categories its subjects may have (empty: any)."
                    },
                    "objects": {
                        "type": "array",
                        "items": {
                            "type": "string"
                        },
                        "description": "Categories its objects may have (empty: any)."
                    },
                    "may_change": {
                        "type": "boolean"
                    }
                }
            }),
        )
        .schema(
            "Predicates",
            || json!({
                "type": "object",
                "required": [
                    "predicates"
                ],
                "properties": {
                    "predicates": {
                        "type": "array",
                        "items": {
                            "$ref": "#/components/schemas/Predicate"
                        }
                    }
                }
            }),
        )
        .schema(
            "Settings",
            || json!({
                "type": "object",
                "required": [
                    "settings"
                ],
                "properties": {
                    "settings": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": [
                                "key",
                                "value",
                                "changeable"
                            ],
                            "properties": {
                                "key": {
                                    "type": "string"
                                },
                                "value": {
                                    "type": "string"
                                },
                                "changeable": {
                                    "type": "boolean",
                                    "description": "False for a key with a dot: it belongs to a part of Bulwark and is changed through its own API."
                                }
                            }
                        }
                    }
                }
            }),
        )
        .schema(
            "Modules",
            || json!({
                "type": "object",
                "required": [
                    "modules"
                ],
                "properties": {
                    "modules": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": [
                                "name",
                                "enabled",
                                "needs",
                                "changeable"
                            ],
                            "properties": {
                                "name": {
                                    "type": "string"
                                },
                                "enabled": {
                                    "type": "boolean"
                                },
                                "needs": {
                                    "type": "array",
                                    "items": {
                                        "type": "string"
                                    },
                                    "description": "Modules it needs enabled too."
                                },
                                "changeable": {
                                    "type": "boolean",
                                    "description": "False for core (always on) and for auth and admin while they are on (turned off in site.toml only)."
                                }
                            }
                        }
                    }
                }
            }),
        )
}
