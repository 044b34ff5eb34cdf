"""The words people put in spreadsheet headers and cells, as `loader init` (`draft`) matches them:
synonyms of each field's name, words naming a reference, personal data, status words and list
separators. Data only; add a word here to teach the draft a new header.
"""

from __future__ import annotations

from collections.abc import Mapping

# What people call a program (the part of a course one studies in): in headers and sheet names.
AREA_WORDS = ("area of study", "major", "minor", "specialisation", "specialization", "stream")
# Words naming an entity in a sheet's name, besides the entity's own name.
ENTITY_WORDS: Mapping[str, tuple[str, ...]] = {"program": (*AREA_WORDS, "areas of study")}

# Words people put in headers for each field, besides the field's own name.
SYNONYMS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "*": {
        "code": ("code", "{entity} code", "{entity} id", "{entity} number", "{entity} no"),
        "name": ("name", "title", "{entity} name", "{entity} title", "description"),
    },
    "subject": {"access": ("access", "access type", "visibility"), "code": ("unit code", "unit id", "unit number"),
                "name": ("unit title", "unit name")},
    "applicant": {
        "external_id": ("applicant id", "applicant number", "applicant no", "student id", "student number",
                        "student no", "external id", "id"),
        "first_name": ("first name", "given name", "given names", "forename", "first names"),
        "last_name": ("last name", "surname", "family name", "last names"),
        "email_address": ("email", "email address", "e mail", "mail"),
        "date_of_birth": ("date of birth", "dob", "birth date", "birthdate", "birthday"),
        "eligible_deliveries": ("eligible deliveries", "deliveries", "delivery", "delivery modes", "delivery mode"),
    },
    "credential": {
        "type": ("credential type", "type", "qualification type", "qual type"),
        "name": ("credential name", "credential", "qualification", "qualification name", "name"),
        "institutionCode": ("institution code", "provider code"),
        "institutionName": ("institution name", "institution", "provider", "provider name"),
        "country": ("country", "country of study"),
        "completionDate": ("completion date", "completed", "date completed", "completion"),
        "resultType": ("result type", "grade type", "score type"),
        "result": ("result", "grade", "score", "mark", "atar"),
        "duration": ("duration", "length"),
    },
    "program": {"code": tuple(f"{w} {n}" for w in AREA_WORDS for n in ("code", "id")),
                "name": tuple(f"{w} {n}" for w in AREA_WORDS for n in ("title", "name"))},
    "arrangement": {"subjects_awarded": ("subjects awarded", "awarded subjects", "credit subjects", "subjects")},
}
REF_WORDS = ("{target} code", "{target} id", "{target}", "parent {target}", "parent code", "parent")
PII_FIELDS: Mapping[str, frozenset[str]] = {
    "applicant": frozenset({"first_name", "last_name", "email_address", "date_of_birth"}),
}
PII_WORDS = ("name", "email", "mail", "phone", "mobile", "address", "birth", "dob", "gender", "sex", "passport",
              "visa", "tfn", "usi", "postcode", "suburb", "street", "nationality")
STATUS_WORDS: Mapping[str, str] = {
    "live": "ACTIVE", "active": "ACTIVE", "current": "ACTIVE", "open": "ACTIVE", "approved": "ACTIVE",
    "ready": "READY", "draft": "DRAFT", "new": "DRAFT", "pending": "DRAFT",
    "retired": "INACTIVE", "inactive": "INACTIVE", "closed": "INACTIVE", "withdrawn": "INACTIVE",
    "expired": "INACTIVE",
}
LIST_SEPARATORS = (";", "|", ",")
