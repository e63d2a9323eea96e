"""Realistic YAML for the rule lexer's tests: manifests, workflows, compose files and YAML's harder corners."""

SAMPLES: dict[str, str] = {
    "k8s": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
    tier: "frontend"
  annotations:
    deployment.kubernetes.io/revision: "3"
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx:1.25.3
          ports:
            - containerPort: 80
              protocol: TCP
          env:
            - name: LOG_LEVEL
              value: debug
            - name: POD_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.podIP
          resources:
            limits: {cpu: 500m, memory: 128Mi}
          command: ["/bin/sh", "-c"]
          args:
            - |
              echo starting: now
              exec nginx -g 'daemon off;'
          livenessProbe:
            httpGet:
              path: /healthz
              port: 80
            initialDelaySeconds: 3
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: ClusterIP
  ports:
  - port: 80
    targetPort: 8080
""",
    "gha": """name: CI
on:
  push:
    branches: [ main ]
  pull_request:
    types: [opened, synchronize]
env:
  PYTHON_VERSION: '3.11'
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      fail-fast: false
      matrix:
        os: [ubuntu-latest, macos-latest]
        python: ["3.10", "3.11"]
    steps:
      - uses: actions/checkout@v4
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - name: Install
        run: |
          python -m pip install --upgrade pip
          pip install -e .[dev]  # editable: with extras
          echo "key: value" > config.yaml

          if [ -f requirements.txt ]; then pip install -r requirements.txt; fi
      - name: Test
        run: >-
          pytest -q
          --cov=sitegen
          -k "not slow"
      - run: echo done
        if: github.event_name == 'push' && startsWith(github.ref, 'refs/tags/')
      # a comment between steps
      - name: Upload
        uses: actions/upload-artifact@v4
        with:
          name: coverage
          path: |
            coverage.xml
            htmlcov/
""",
    "compose": """version: "3.9"
services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: example   # not for production
      POSTGRES_DB: app
    volumes:
      - db-data:/var/lib/postgresql/data
      - ./init.sql:/docker-entrypoint-initdb.d/init.sql:ro
    healthcheck:
      test: ["CMD-SHELL", "pg_isready -U postgres"]
      interval: 10s
  web:
    build: .
    ports:
      - "8000:8000"
    depends_on:
      db:
        condition: service_healthy
    command: >
      sh -c "python manage.py migrate &&
             python manage.py runserver 0.0.0.0:8000"
volumes:
  db-data: {}
""",
    "anchors": """defaults: &defaults
  adapter: postgres
  host: localhost
  pool: 5

development:
  <<: *defaults
  database: dev_db

test: &test
  <<: *defaults
  database: test_db
ids: [*test, &x 1, *x]
base: !!map
  name: !!str 123
  count: !!int "7"
  when: !!timestamp 2001-12-14t21:59:43.10-05:00
  bucket: !Ref MyBucket
  arn: !GetAtt [Role, Arn]
  joined: !Sub "arn:aws:s3:::${Bucket}/*"
  local: !<tag:yaml.org,2002:str> foo
""",
    "flow": """point: {x: 1, y: 2}
nested: {a: 1, b: [x, y, {c: d}], 'e f': "g"}
list: [1, 2.5, -3, true, null, ~, "str", 'single']
empty_map: {}
empty_list: []
multi: [
  one,
  two,   # comment
  three
]
map: {
  key: value,
  other: [a, b]
}
""",
    "quoted": r"""single: 'it''s here: yes'
double: "tab\there\nnewline \"quoted\" \\ back \x41 \u00e9 \U0001F600"
bad_escape: "\q and \u12"
multi: "first line
  second line"
key with spaces: value with spaces
"quoted key": 1
'single key': 2
url: http://example.com:8080/path?q=1#frag
time: 12:30:45
empty:
null_value: ~
tilde: ~
colon_in_value: a:b:c
dash-key: -1
question: what?
""",
    "docs": """%YAML 1.2
%TAG ! tag:example.com,2000:app/
---
first: doc
...
---
second: doc
--- # comment after marker
- a
- b
...
--- |
  literal document
---
>
  folded document
""",
    "scalars": """literal: |
  line one
    indented line
  line three

keep: |+
  trailing newlines kept


strip: |-
  no trailing newline
folded: >
  folded text
  continues here

  new paragraph
folded_strip: >-
  x
indented: |2
  two spaces exact
  more
chomp_indent: |-2
  a
  b
indicator_comment: | # a comment
  content
last: end
""",
    "lists": """- name: a
  value: 1
- name: b
  value: 2
  tags:
    - x
    - y
- - nested
  - list
- - - deep
-
  key: after empty dash
- ? complex key
  : complex value
- plain item
- "quoted item"
- 42
""",
    "comments": """# top comment
key: value # trailing
# between
list:
  # inside
  - a # after item
  - b
    # indented comment
nested:
    deep: 1   # spaces
  # dedented comment
other: 2
""",
    "tabs_crlf": 'a: 1\r\nb:\r\n  c: 2\r\n  d: |\r\n    x\r\n    y\r\ne: "t\\tq"\r\n\tf: tab-led\ng:\t3\n',
    "empty_values": """a:
b:
c: ''
d: ""
e:
  -
  - ''
f: []
""",
    "multiline_plain": """description: This is a long
  description that wraps
  over lines
summary:
  A plain scalar on its own line
  that continues
next: value
""",
    "openapi": """openapi: 3.0.0
info:
  title: Sample API
  description: >-
    Optional multiline or single-line description in
    [CommonMark](http://commonmark.org/help/) or HTML.
  version: 0.1.9
paths:
  /users:
    get:
      summary: Returns a list of users.
      responses:
        '200':
          description: A JSON array of user names
          content:
            application/json:
              schema:
                type: array
                items:
                  type: string
""",
    "ansible": """- hosts: webservers
  vars:
    http_port: 80
  tasks:
  - name: ensure apache is at the latest version
    yum:
      name: httpd
      state: latest
  - name: write the apache config file
    template:
      src: /srv/httpd.j2
      dest: /etc/httpd.conf
    notify:
    - restart apache
  - name: run a script
    shell: |
      set -e
      for f in *.conf; do
        echo "$f: ok"
      done
    when: ansible_os_family == "RedHat"
""",
}
