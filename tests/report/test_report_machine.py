"""`--format json` of a plan: the rule groups of each block, schema-valid, without values."""

from __future__ import annotations

import json

import jsonschema
from helpers.large_plans import cycle, first_load
from helpers.report import review_plan

from loader.files.package_data import schema
from loader.report.machine import dumps, plan_document

VALIDATOR = jsonschema.Draft202012Validator(schema("output.schema.json"))


def test_the_plan_document_has_each_blocks_rule_groups_with_their_mapping_lines() -> None:
    document = json.loads(dumps(plan_document(cycle(70), 2)))
    VALIDATOR.validate(document)
    (block,) = document["blocks"]
    assert block["dropped"] == 1 and block["not_managed_here"] == 5
    groups = {(g["kind"], g["field"]): g for g in block["rule_groups"]}
    name = groups[("update", "name")]
    assert name["place"] == "mappings/units.yaml:26" and name["rule"] == "name ← column 'Unit Name'"
    assert name["records"] == 53 and len(name["sample"]) == 10 and name["profile"] is None
    assert groups[("update", "status steps")]["place"] is None
    code = groups[("create", "code")]
    assert code["records"] == 10 and code["profile"] == {"with_value": 10, "empty": 0, "distinct": 10}
    faculty = groups[("create", "custom_attributes.Faculty")]
    assert faculty["profile"]["with_value"] + faculty["profile"]["empty"] == 10
    assert "Unit 1 (revised)" not in json.dumps(document)  # never a value


def test_the_samples_of_a_large_plan_are_ten_refs_and_pii_has_no_distinct_count() -> None:
    groups = plan_document(first_load(17_000), 2)["blocks"][0]["rule_groups"]
    assert all(len(g["sample"]) == 10 for g in groups)
    document = json.loads(dumps(plan_document(review_plan(), 1)))
    VALIDATOR.validate(document)
    applicants = next(b for b in document["blocks"] if b["name"] == "applicants")
    email = {g["kind"]: g for g in applicants["rule_groups"] if g["field"] == "email_address"}
    assert email["update"]["records"] == 1 and email["create"]["profile"] == {"with_value": 1, "empty": 0,
                                                                            "distinct": None}  # PII: not even that
    assert "secret" not in json.dumps(document)
