# One image for the web server, the worker and the scheduler.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    KUBEGAP_VAR_DIR=/var/lib/kubegap

RUN groupadd --system kubegap && useradd --system --gid kubegap --home-dir /app kubegap
WORKDIR /app

COPY requirements/base.txt requirements/base.txt
RUN pip install --no-cache-dir --require-hashes -r requirements/base.txt

COPY . .
# collectstatic needs settings; a throwaway key keeps it from demanding the real one.
RUN SECRET_KEY=build-only DATABASE_URL=sqlite:////tmp/build.sqlite3 KUBEGAP_VAR_DIR=/app/var \
    python manage.py collectstatic --noinput --verbosity 0 \
 && mkdir -p /var/lib/kubegap && chown -R kubegap:kubegap /var/lib/kubegap /app/var

ENV STATIC_ROOT=/app/var/static
USER kubegap
EXPOSE 8000
CMD ["gunicorn", "kubegap_web.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
